// lrkit's fused residual add + LayerNorm for the GPT's pre-norm stream, as raw
// CUDA launches over row-major [rows, cols] buffers. One pass each way where
// the composite ops take five to seven (the add, the norm, autocast's cast to
// bfloat16, and in the backward the cast back, the norm's backward and the
// sum of the stream's two gradients). No LibTorch here, so nvcc compiles it
// alone; add_layer_norm.cpp owns the tensors and the autograd graph.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "add_layer_norm_args.hpp"

namespace lrkit::train::cuda {

// How many row chunks the backward sums gamma's and beta's gradients over (each chunk in a fixed order, so
// the result is the same on every run).
int64_t add_layer_norm_chunks(int64_t rows);

// Queue the kernels on `stream`; the result is the launch's error (cudaSuccess when queued).
cudaError_t add_layer_norm_forward(const AddLayerNormForwardArgs& args, cudaStream_t stream);
cudaError_t add_layer_norm_backward(const AddLayerNormBackwardArgs& args, cudaStream_t stream);

}  // namespace lrkit::train::cuda
