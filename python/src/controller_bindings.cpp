// The HDET controller (ALGORITHMS.md section 6) for Python: its Config, its
// explicit State and the pure updates, exactly the C++ ones. lrkit.torch.HDET
// drives it inside a torch.distributed loop.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "lrkit/controllers/hdet.hpp"

namespace py = pybind11;

namespace lrkit::python {

void bind_controllers(py::module_& m) {
  using controllers::Hdet;
  using controllers::HdetConfig;
  using controllers::HdetState;
  py::class_<HdetConfig>(m, "HdetConfig", "HDET's settings (alpha, sync_every, sigma, ...); replicas = world size")
      .def(py::init<>())
      .def_readwrite("replicas", &HdetConfig::replicas)
      .def_readwrite("alpha", &HdetConfig::alpha)
      .def_readwrite("sync_every", &HdetConfig::sync_every)
      .def_readwrite("auto_lr", &HdetConfig::auto_lr)
      .def_readwrite("warmup_steps", &HdetConfig::warmup_steps)
      .def_readwrite("sigma", &HdetConfig::sigma)
      .def_readwrite("beta", &HdetConfig::beta)
      .def_readwrite("meta_lr", &HdetConfig::meta_lr)
      .def_readwrite("min_scale", &HdetConfig::min_scale)
      .def_readwrite("max_scale", &HdetConfig::max_scale)
      .def_readwrite("lower", &HdetConfig::lower)
      .def_readwrite("upper", &HdetConfig::upper)
      .def_readwrite("standardize", &HdetConfig::standardize)
      .def_readwrite("paper_mode", &HdetConfig::paper_mode)
      .def_readwrite("seed", &HdetConfig::seed)
      .def("validate", &HdetConfig::validate);
  py::class_<HdetState>(m, "HdetState", "HDET's explicit state (its fields are what lrkit.torch.HDET.state_dict() saves)")
      .def(py::init<>())
      .def_readwrite("step", &HdetState::step)
      .def_readwrite("syncs", &HdetState::syncs)
      .def_readwrite("scale", &HdetState::scale)
      .def_readwrite("offset", &HdetState::offset)
      .def_readwrite("velocity", &HdetState::velocity)
      .def_readwrite("delta", &HdetState::delta)
      .def_readwrite("permutation", &HdetState::permutation)
      .def_readwrite("window_loss", &HdetState::window_loss)
      .def_readwrite("window_steps", &HdetState::window_steps);
  py::class_<Hdet>(m, "Hdet", "the controller: pure functions from one HdetState to the next")
      .def(py::init<HdetConfig>(), py::arg("config"))
      .def_property_readonly("config", &Hdet::config)
      .def_property_readonly("spread", &Hdet::spread)
      .def("init", &Hdet::init)
      .def("base_value", &Hdet::base_value, py::arg("state"), py::arg("scheduled"))
      .def("replica_value", &Hdet::replica_value, py::arg("state"), py::arg("replica"), py::arg("scheduled"))
      .def("observe", &Hdet::observe, py::arg("state"), py::arg("replica_losses"))
      .def("sync_due", &Hdet::sync_due, py::arg("state"))
      .def("sync_due_after", &Hdet::sync_due_after, py::arg("state"), py::arg("more_steps"))
      .def("sync", &Hdet::sync, py::arg("state"), py::arg("scheduled"))
      .def("check_state", &Hdet::check_state, py::arg("state"),
           "raises ValueError, naming the field, for a state that is not one of this controller's");
}

}  // namespace lrkit::python
