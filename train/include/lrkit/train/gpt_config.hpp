// The reference GPT's shape ([model] of a training config). Torch-free, so
// configs, sweeps and tools can hold one without LibTorch.
#pragma once

#include <cstdint>

#include "lrkit/train/config_choice.hpp"

namespace lrkit::train {

// How attention is computed; the parameters are the same either way.
// fused: scaled_dot_product_attention with the causal flag (FlashAttention or
// memory-efficient kernels on CUDA; LibTorch 1.13's private math form
// elsewhere); explicit: the materialized [batch, heads, T, T] scores;
// auto: fused where LibTorch has it publicly (2.0 on), else explicit.
enum class Attention { auto_, fused, explicit_ };
template <> struct ChoiceNames<Attention> {
  static constexpr std::pair<Attention, const char*> values[] = {
      {Attention::auto_, "auto"}, {Attention::fused, "fused"}, {Attention::explicit_, "explicit"}};
};

// Whether each residual add and the LayerNorm after it run as lrkit's one fused
// CUDA kernel each way (train/src/cuda/) instead of the composite ops:
// on: where the tensors are on CUDA (a build without the kernel refuses it);
// auto: on where this build has the kernel; off: the composite everywhere.
enum class FusedNorm { off, on, auto_ };
template <> struct ChoiceNames<FusedNorm> {
  static constexpr std::pair<FusedNorm, const char*> values[] = {
      {FusedNorm::off, "off"}, {FusedNorm::on, "on"}, {FusedNorm::auto_, "auto"}};
};

struct GptConfig {
  int64_t vocab = 256;
  int64_t context = 128;
  int64_t layers = 2;
  int64_t heads = 4;
  int64_t width = 128;
  double dropout = 0.0;
  Choice<Attention> attention = Attention::auto_;
  // auto: the kernel wherever the build has it and the run is on CUDA; its twins pass and it is the faster on an
  // H200 (bench/GPU_NOTES.md).
  Choice<FusedNorm> fused_norm = FusedNorm::auto_;

  // Throws std::invalid_argument naming the bad field (e.g. width not divisible by heads).
  void validate() const;
};

}  // namespace lrkit::train
