#include "lrkit/train/model_flops.hpp"

namespace lrkit::train {

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
