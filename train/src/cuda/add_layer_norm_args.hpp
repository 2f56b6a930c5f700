// The arguments of lrkit's fused residual add + LayerNorm kernels
// (add_layer_norm_kernels.hpp): raw row-major [rows, cols] buffers. Free of
// CUDA's headers, so the kernels' CPU emulation (tests) can include it too.
#pragma once

#include <cstdint>

namespace lrkit::train::cuda {

enum class Dtype { float32, bfloat16 };

struct AddLayerNormForwardArgs {
  const float* x = nullptr;       // the residual stream
  const void* branch = nullptr;   // added to x first (element type branch_dtype)
  Dtype branch_dtype = Dtype::float32;
  const float* gamma = nullptr;   // [cols]
  const float* beta = nullptr;    // [cols]
  float* h = nullptr;             // out: x + branch
  void* normed = nullptr;         // out: (h - mean) * rstd * gamma + beta, element type normed_dtype
  Dtype normed_dtype = Dtype::float32;
  float* mean = nullptr;          // out [rows]
  float* rstd = nullptr;          // out [rows]: 1 / sqrt(biased variance + eps), as PyTorch's layer_norm saves it
  int64_t rows = 0;
  int64_t cols = 0;
  float eps = 1e-5f;
};

struct AddLayerNormBackwardArgs {
  const void* grad_normed = nullptr;  // element type normed_dtype
  Dtype normed_dtype = Dtype::float32;
  const float* grad_h = nullptr;      // what h's other uses gave it, or null
  const float* h = nullptr;           // the normalized rows
  const float* mean = nullptr;
  const float* rstd = nullptr;
  const float* gamma = nullptr;
  float* grad_x = nullptr;            // out
  void* grad_branch = nullptr;        // out (element type branch_dtype): the same values as grad_x
  Dtype branch_dtype = Dtype::float32;
  float* gamma_partial = nullptr;     // out [chunks, cols]: their sum over chunks is gamma's gradient
  float* beta_partial = nullptr;      // out [chunks, cols]
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t chunks = 0;                 // add_layer_norm_chunks(rows)
};

}  // namespace lrkit::train::cuda
