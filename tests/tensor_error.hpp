// How far a computed tensor is from a reference, relative to the reference's
// scale: max |got - want| / max |want|, in float64 on the CPU (either may be on
// a GPU or in bfloat16).
#pragma once

#include <torch/torch.h>

namespace lrkit::testing {

inline double relative_error(const torch::Tensor& got, const torch::Tensor& want) {
  const auto g = got.detach().to(torch::kCPU).to(torch::kDouble), w = want.detach().to(torch::kCPU).to(torch::kDouble);
  return ((g - w).abs().max() / w.abs().max().clamp_min(1e-12)).item<double>();
}

}  // namespace lrkit::testing
