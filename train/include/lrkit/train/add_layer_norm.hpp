// One step of the GPT's pre-norm residual stream: h = x + branch, then
// normed = LayerNorm(h), which the next sub-block reads. Fused, it is one CUDA
// kernel each way (lrkit's, cuda/add_layer_norm_kernels.cu); otherwise the
// composite ops. The GPT carries its stream as NormedStream pairs (gpt.hpp) so
// that every residual add meets the LayerNorm after it.
#pragma once

#include <torch/torch.h>

#include "lrkit/train/gpt.hpp"

namespace lrkit::train {

// x: [..., C] (the stream); branch: x's shape, or undefined (h = x); norm: a LayerNorm over C with weight and bias.
// fused: lrkit's kernel where the tensors allow it (CUDA, a float32 stream, a float32 or bfloat16 branch) and this
// build has it; then normed takes branch's type (bfloat16 under autocast: the type the next matmul reads). The
// composite, and every call without a branch, leaves normed in the type layer_norm gives (float32 under autocast).
NormedStream add_layer_norm(const torch::Tensor& x, const torch::Tensor& branch, torch::nn::LayerNorm& norm, bool fused);

// Whether this build compiled the kernel (CUDA code paths, and a CUDA compiler at configure time).
bool add_layer_norm_kernel_built();

}  // namespace lrkit::train
