// lrkit._lrkit: the C++ schedule library and HDET controller for Python. The
// package `lrkit` (python/lrkit) wraps it; use that, not this module.
#include "bindings.hpp"

PYBIND11_MODULE(_lrkit, m) {
  m.doc() = "lrkit's C++ core: schedules (spec grammar, every family, refinement) and the HDET controller";
  m.attr("__version__") = LRKIT_VERSION;
  lrkit::python::bind_schedules(m);
  lrkit::python::bind_controllers(m);
}
