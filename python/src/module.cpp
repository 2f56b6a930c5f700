// lrkit._lrkit: the C++ schedule library, HDET controller, sample reweighting, spike detector and dispersion report
// for Python. The package `lrkit` (python/lrkit) wraps it; use that, not this module.
#include "bindings.hpp"

PYBIND11_MODULE(_lrkit, m) {
  m.doc() = "lrkit's C++ core: schedules (spec grammar, every family, refinement), the HDET controller, sample reweighting, the spike detector, the dispersion report and the run log check";
  m.attr("__version__") = LRKIT_VERSION;
  lrkit::python::translate_errors_naming_files();
  lrkit::python::bind_schedules(m);
  lrkit::python::bind_controllers(m);
  lrkit::python::bind_reweighting(m);
  lrkit::python::bind_spikes(m);
  lrkit::python::bind_diagnose(m);
  lrkit::python::bind_run_logs(m);
}
