#include "lrkit/train/model_flops.hpp"

namespace lrkit::train {

namespace {

template <typename Number>
Number parameters_of(const GptConfig& m) {
  const auto w = static_cast<Number>(m.width);
  // Tied token embedding and output head, position embedding, per block two LayerNorms (2w each), qkv (3w^2 + 3w),
  // its projection (w^2 + w), the MLP (4w^2 + 4w and 4w^2 + w); the final LayerNorm.
  return static_cast<Number>(m.vocab) * w + static_cast<Number>(m.context) * w +
         static_cast<Number>(m.layers) * (12 * w * w + 13 * w) + 2 * w;
}

}  // namespace

int64_t parameter_count(const GptConfig& m) { return parameters_of<int64_t>(m); }

double parameter_count_unbounded(const GptConfig& m) { return parameters_of<double>(m); }

double flops_per_token(const GptConfig& c, int64_t parameters) {
  return 6.0 * static_cast<double>(parameters) +
         12.0 * static_cast<double>(c.layers) * static_cast<double>(c.width) * static_cast<double>(c.context);
}

double known_peak_flops(const std::string& name) {
  const auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  if (has("H100") && has("PCIe")) return 756e12;
  if (has("H100") || has("H200")) return 989.4e12;  // SXM; GH200 too
  if (has("A100")) return 312e12;
  return 0.0;
}

}  // namespace lrkit::train
