// Loss-based sample reweighting (ALGORITHMS.md section 8) for Python: the
// weights of a global batch, their statistics and histogram, exactly the C++
// functions the trainer uses. lrkit.torch.SampleReweighting drives them inside
// a (distributed) PyTorch loop.
#include <pybind11/stl.h>

#include "bindings.hpp"
#include "lrkit/reweight/sample_weights.hpp"

namespace py = pybind11;

namespace lrkit::python {

void bind_reweighting(py::module_& m) {
  using namespace lrkit::reweight;
  m.def(
      "reweight_strategy", [](const std::string& name) { return to_string(parse_strategy(name)); }, py::arg("name"),
      "the strategy's name if lrkit knows it (uniform, linupper, quadratic, extremes, linear); ValueError otherwise");
  m.def(
      "sample_weights",
      [](const std::vector<double>& losses, const std::string& strategy, double strength,
         const std::vector<double>& token_counts) { return sample_weights(losses, parse_strategy(strategy), strength, token_counts); },
      py::arg("losses"), py::arg("strategy"), py::arg("strength"), py::arg("token_counts") = std::vector<double>(),
      "the weights of a global batch's per-sample losses (they sum to 1; a non-finite loss gets 0)");
  m.def(
      "weight_stats",
      [](const std::vector<double>& weights) {
        const WeightStats s = weight_stats(weights);
        py::dict out;
        out["entropy"] = s.entropy;
        out["max_min_ratio"] = s.max_min_ratio;
        out["effective_size"] = s.effective_size;
        return out;
      },
      py::arg("weights"), "entropy (nats), max_min_ratio and effective_size (1 / sum w^2) of a batch's weights");
  m.def("relative_weight_histogram", &relative_weight_histogram, py::arg("weights"), py::arg("bins"), py::arg("max_relative"),
        "counts of N w_i in `bins` equal bins over [0, max_relative], the last also taking what lies above");
}

}  // namespace lrkit::python
