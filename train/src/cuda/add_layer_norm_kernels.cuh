// The device code of lrkit's fused residual add + LayerNorm: the kernels and
// their launch geometry. nvcc compiles it in add_layer_norm_kernels.cu; the
// kernels' CPU emulation (tests/train/add_layer_norm_kernels_test.cpp) defines
// CUDA's built-ins (threads, warp shuffles, bfloat16) and includes it too.
//
// Layout: one warp per row for the row-wise work (a row of the GPT's stream is
// a few kilobytes, so the warp's second and third sweeps over it hit the cache,
// not memory); the gradients of gamma and beta are summed by column tiles over
// fixed chunks of rows, then over chunks by the caller: the same order on every
// run, where atomics would make each run differ in the last bits.
#pragma once

#ifdef __CUDACC__
#include <cuda_bf16.h>
#endif

#include <cstdint>

#include "add_layer_norm_args.hpp"

namespace lrkit::train::cuda::kernels {

constexpr int kWarp = 32;  // blockDim (kWarp, kRowsPerBlock) for every kernel
constexpr int kRowsPerBlock = 8;      // warps per block in the row kernels; y threads in the column kernel
constexpr int64_t kRowsPerChunk = 32;
constexpr int64_t kMaxChunks = 256;

template <typename T>
__device__ __forceinline__ float to_float(T v);
template <>
__device__ __forceinline__ float to_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16(v);  // round to nearest even, as PyTorch's cast
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

template <typename Branch, typename Normed>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock) forward_rows(AddLayerNormForwardArgs a) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= a.rows) return;  // the whole warp: its shuffles stay complete
  const int64_t base = row * a.cols;
  const float* x = a.x + base;
  const Branch* branch = static_cast<const Branch*>(a.branch) + base;
  // The later passes read back h, which this thread wrote: one load where x + branch would take two.
  float* h = a.h + base;
  const float n = static_cast<float>(a.cols);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float v = x[c] + to_float(branch[c]);
    h[c] = v;
    sum += v;
  }
  const float mean = warp_sum(sum) / n;
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float d = h[c] - mean;
    squares += d * d;
  }
  const float rstd = rsqrtf(warp_sum(squares) / n + a.eps);
  Normed* normed = static_cast<Normed*>(a.normed) + base;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp)
    normed[c] = from_float<Normed>((h[c] - mean) * rstd * a.gamma[c] + a.beta[c]);
  if (threadIdx.x == 0) {
    a.mean[row] = mean;
    a.rstd[row] = rstd;
  }
}

// d(LayerNorm)/dh for one row: rstd * (g - mean(g) - xhat * mean(g * xhat)), g = grad_normed * gamma;
// plus what h's other uses gave it; the branch's gradient is the same values in the branch's type.
template <typename Normed, typename Branch, bool kHasGradH>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock) backward_rows(AddLayerNormBackwardArgs a) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerBlock + threadIdx.y;
  if (row >= a.rows) return;
  const int64_t base = row * a.cols;
  const Normed* grad_normed = static_cast<const Normed*>(a.grad_normed) + base;
  const float* h = a.h + base;
  const float mean = a.mean[row], rstd = a.rstd[row], n = static_cast<float>(a.cols);
  float sum_g = 0.0f, sum_g_xhat = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float g = to_float(grad_normed[c]) * a.gamma[c];
    sum_g += g;
    sum_g_xhat += g * (h[c] - mean) * rstd;
  }
  const float mean_g = warp_sum(sum_g) / n, mean_g_xhat = warp_sum(sum_g_xhat) / n;
  Branch* grad_branch = static_cast<Branch*>(a.grad_branch) + base;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float g = to_float(grad_normed[c]) * a.gamma[c];
    float d = rstd * (g - mean_g - (h[c] - mean) * rstd * mean_g_xhat);
    if (kHasGradH) d += a.grad_h[base + c];
    a.grad_x[base + c] = d;
    grad_branch[c] = from_float<Branch>(d);
  }
}

// Block (32 columns, 8 row lanes) per column tile and chunk of rows: partial sums of grad_normed * xhat
// (gamma) and grad_normed (beta); a chunk past the last row writes zeros.
template <typename Normed>
__global__ void __launch_bounds__(kWarp* kRowsPerBlock) backward_columns(AddLayerNormBackwardArgs a) {
  __shared__ float gamma_sums[kRowsPerBlock][kWarp];
  __shared__ float beta_sums[kRowsPerBlock][kWarp];
  const int64_t col = static_cast<int64_t>(blockIdx.x) * kWarp + threadIdx.x;
  const int64_t rows_per_chunk = (a.rows + a.chunks - 1) / a.chunks;
  const int64_t first = static_cast<int64_t>(blockIdx.y) * rows_per_chunk;
  const int64_t last = first + rows_per_chunk < a.rows ? first + rows_per_chunk : a.rows;
  const Normed* grad_normed = static_cast<const Normed*>(a.grad_normed);
  float dgamma = 0.0f, dbeta = 0.0f;
  if (col < a.cols) {
    for (int64_t r = first + threadIdx.y; r < last; r += kRowsPerBlock) {
      const float g = to_float(grad_normed[r * a.cols + col]);
      dgamma += g * (a.h[r * a.cols + col] - a.mean[r]) * a.rstd[r];
      dbeta += g;
    }
  }
  gamma_sums[threadIdx.y][threadIdx.x] = dgamma;
  beta_sums[threadIdx.y][threadIdx.x] = dbeta;
  __syncthreads();
  if (threadIdx.y != 0 || col >= a.cols) return;
  for (int i = 1; i < kRowsPerBlock; ++i) {
    dgamma += gamma_sums[i][threadIdx.x];
    dbeta += beta_sums[i][threadIdx.x];
  }
  a.gamma_partial[blockIdx.y * a.cols + col] = dgamma;
  a.beta_partial[blockIdx.y * a.cols + col] = dbeta;
}

// Blocks of the row kernels (one warp per row) and of the column kernel (32 columns x one chunk of rows).
inline unsigned row_blocks(int64_t rows) { return static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock); }
inline unsigned column_blocks(int64_t cols) { return static_cast<unsigned>((cols + kWarp - 1) / kWarp); }

inline int64_t chunk_count(int64_t rows) {
  const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  return chunks < 1 ? 1 : chunks > kMaxChunks ? kMaxChunks : chunks;
}

}  // namespace lrkit::train::cuda::kernels
