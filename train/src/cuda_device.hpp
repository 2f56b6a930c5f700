// A CUDA worker's process-wide settings: its GPU becomes the current device
// (NCCL and the caching allocator use it), and fp32 matmuls that autocast
// leaves in fp32 use TF32 when train.tf32 (torch.set_float32_matmul_precision).
#pragma once

#include <ATen/Context.h>
#include <torch/torch.h>
#include <string>
#ifdef LRKIT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

namespace lrkit::train {

inline void use_cuda_device([[maybe_unused]] const torch::Device& device, bool tf32) {
#ifdef LRKIT_WITH_CUDA
  c10::cuda::set_device(device.index());
#endif
  at::globalContext().setFloat32MatmulPrecision(tf32 ? "high" : "highest");
}

// "NVIDIA H100 80GB HBM3" and the like; "cpu" for the CPU.
inline std::string device_name([[maybe_unused]] const torch::Device& device) {
#ifdef LRKIT_WITH_CUDA
  if (device.is_cuda()) return at::cuda::getDeviceProperties(device.index())->name;
#endif
  return device.is_cuda() ? "cuda" : "cpu";
}

}  // namespace lrkit::train
