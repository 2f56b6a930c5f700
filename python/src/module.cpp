// lrkit._lrkit: the C++ schedule library, HDET controller and sample reweighting for Python. The
// package `lrkit` (python/lrkit) wraps it; use that, not this module.
#include "bindings.hpp"

PYBIND11_MODULE(_lrkit, m) {
  m.doc() = "lrkit's C++ core: schedules (spec grammar, every family, refinement), the HDET controller and sample reweighting";
  m.attr("__version__") = LRKIT_VERSION;
  lrkit::python::bind_schedules(m);
  lrkit::python::bind_controllers(m);
  lrkit::python::bind_reweighting(m);
}
