// lrkit's fused residual add + LayerNorm for the GPT's pre-norm stream, as raw
// CUDA launches over row-major [rows, cols] buffers. One pass each way where
// the composite ops take five to seven (the add, the norm, autocast's cast to
// bfloat16, and in the backward the cast back, the norm's backward and the
// sum of the stream's two gradients). No LibTorch here, so nvcc compiles it
// alone; add_layer_norm.cpp owns the tensors and the autograd graph.
#pragma once

#include <cuda_runtime_api.h>

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

// How many row chunks the backward sums gamma's and beta's gradients over (each chunk in a fixed order, so
// the result is the same on every run).
int64_t add_layer_norm_chunks(int64_t rows);

// Queue the kernels on `stream`; the result is the launch's error (cudaSuccess when queued).
cudaError_t add_layer_norm_forward(const AddLayerNormForwardArgs& args, cudaStream_t stream);
cudaError_t add_layer_norm_backward(const AddLayerNormBackwardArgs& args, cudaStream_t stream);

}  // namespace lrkit::train::cuda
