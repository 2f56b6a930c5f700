// The reference GPT's shape ([model] of a training config). Torch-free, so
// configs, sweeps and tools can hold one without LibTorch.
#pragma once

#include <cstdint>

namespace lrkit::train {

struct GptConfig {
  int64_t vocab = 256;
  int64_t context = 128;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t width = 128;
  double dropout = 0.0;

  // Throws std::invalid_argument naming the bad field (e.g. width not divisible by heads).
  void validate() const;
};

}  // namespace lrkit::train
