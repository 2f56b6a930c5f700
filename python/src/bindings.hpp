// The pieces of the lrkit._lrkit extension module, one function per concept.
#pragma once

#include <pybind11/pybind11.h>

namespace lrkit::python {

void bind_schedules(pybind11::module_& m);
void bind_controllers(pybind11::module_& m);
void bind_reweighting(pybind11::module_& m);
void bind_spikes(pybind11::module_& m);
void bind_diagnose(pybind11::module_& m);

}  // namespace lrkit::python
