// The skip-step policy's spike detector (ALGORITHMS.md section 9) for Python,
// the C++ one `lrkit train` uses for train.skip_loss_z and train.skip_grad_z;
// lrkit.torch.SpikeGuard drives two of them inside a PyTorch loop.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "lrkit/diagnostics/spike_detector.hpp"

namespace py = pybind11;

namespace lrkit::python {

void bind_spikes(py::module_& m) {
  using diagnostics::SpikeDetector;
  py::class_<SpikeDetector>(m, "SpikeDetector",
                            "z of each value against the last `window` values that entered; a value above `threshold` "
                            "(> 0) is a spike and stays out, from the third spike in a row on it enters")
      .def(py::init([](double threshold, int64_t window) { return SpikeDetector(threshold, window, "threshold", "window"); }),
           py::arg("threshold"), py::arg("window") = 128)
      .def(
          "score",
          [](SpikeDetector& d, double value) {
            const auto scored = d.score(value);
            return py::make_tuple(scored.z, scored.spike);
          },
          py::arg("value"), "(z, spike) of one value, then enters it unless it is a spike")
      .def_property_readonly("window", [](const SpikeDetector& d) { return d.state().window; })
      .def_property_readonly("spikes_in_a_row", [](const SpikeDetector& d) { return d.state().spikes_in_a_row; })
      .def(
          "restore",
          [](SpikeDetector& d, const std::vector<double>& window, int64_t spikes_in_a_row) { d.restore({window, spikes_in_a_row}); },
          py::arg("window"), py::arg("spikes_in_a_row"), "the newest `window` values of a saved state");
}

}  // namespace lrkit::python
