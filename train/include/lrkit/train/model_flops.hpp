// Training FLOPs of the reference GPT and model FLOPs utilization (MFU):
// 6P + 12·L·W·T FLOPs per token (PaLM, appendix B: 6 per parameter for the
// forward and backward matmuls, plus 12·L·W·T for attention's scores and
// weighted sum), over the device's peak. Torch-free.
#pragma once

#include <cstdint>
#include <string>

#include "lrkit/train/gpt_config.hpp"

namespace lrkit::train {

// The reference GPT's parameters, embeddings included, from its shape (the tests build the model and count).
int64_t parameter_count(const GptConfig& model);
// The same count in floating point, which does not wrap around where a shape is too large for whole numbers
// (GptConfig::validate refuses such shapes; parameter_count is exact below its limit).
double parameter_count_unbounded(const GptConfig& model);

// `parameters`: every parameter of the model (embeddings included).
double flops_per_token(const GptConfig& config, int64_t parameters);

// The dense bf16 peak, FLOP/s, of a GPU known by its CUDA name (H100 SXM and
// H200: 989.4e12, H100 PCIe: 756e12, A100: 312e12); 0 when unknown.
double known_peak_flops(const std::string& device_name);

}  // namespace lrkit::train
