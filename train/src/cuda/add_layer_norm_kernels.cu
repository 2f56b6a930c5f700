// Layout: one warp per row for the row-wise work (a row of the GPT's stream is
// a few kilobytes, so the warp's second and third sweeps over it hit the cache,
// not memory); the gradients of gamma and beta are summed by column tiles over
// fixed chunks of rows, then over chunks by the caller: the same order on every
// run, where atomics would make each run differ in the last bits.
#include <cuda_bf16.h>

#include "add_layer_norm_kernels.hpp"

namespace lrkit::train::cuda {
namespace {

constexpr int kWarp = 32;
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
  const auto value = [&](int64_t c) { return x[c] + to_float(branch[c]); };
  const float n = static_cast<float>(a.cols);
  float sum = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float v = value(c);
    a.h[base + c] = v;
    sum += v;
  }
  const float mean = warp_sum(sum) / n;
  float squares = 0.0f;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp) {
    const float d = value(c) - mean;
    squares += d * d;
  }
  const float rstd = rsqrtf(warp_sum(squares) / n + a.eps);
  Normed* normed = static_cast<Normed*>(a.normed) + base;
  for (int64_t c = threadIdx.x; c < a.cols; c += kWarp)
    normed[c] = from_float<Normed>((value(c) - mean) * rstd * a.gamma[c] + a.beta[c]);
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

// Block (32 columns, 8 row lanes) per column tile and chunk of rows: partial sums of grad_normed * xhat (gamma)
// and grad_normed (beta).
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

dim3 row_grid(int64_t rows) { return dim3(static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock)); }
const dim3 kBlock(kWarp, kRowsPerBlock);

template <typename Branch>
void launch_forward(const AddLayerNormForwardArgs& a, cudaStream_t stream) {
  if (a.normed_dtype == Dtype::bfloat16)
    forward_rows<Branch, __nv_bfloat16><<<row_grid(a.rows), kBlock, 0, stream>>>(a);
  else
    forward_rows<Branch, float><<<row_grid(a.rows), kBlock, 0, stream>>>(a);
}

template <typename Normed, typename Branch>
void launch_backward_rows(const AddLayerNormBackwardArgs& a, cudaStream_t stream) {
  if (a.grad_h != nullptr)
    backward_rows<Normed, Branch, true><<<row_grid(a.rows), kBlock, 0, stream>>>(a);
  else
    backward_rows<Normed, Branch, false><<<row_grid(a.rows), kBlock, 0, stream>>>(a);
}

template <typename Normed>
void launch_backward(const AddLayerNormBackwardArgs& a, cudaStream_t stream) {
  if (a.branch_dtype == Dtype::bfloat16)
    launch_backward_rows<Normed, __nv_bfloat16>(a, stream);
  else
    launch_backward_rows<Normed, float>(a, stream);
  const dim3 grid(static_cast<unsigned>((a.cols + kWarp - 1) / kWarp), static_cast<unsigned>(a.chunks));
  backward_columns<Normed><<<grid, kBlock, 0, stream>>>(a);
}

}  // namespace

int64_t add_layer_norm_chunks(int64_t rows) {
  const int64_t chunks = (rows + kRowsPerChunk - 1) / kRowsPerChunk;
  return chunks < 1 ? 1 : chunks > kMaxChunks ? kMaxChunks : chunks;
}

cudaError_t add_layer_norm_forward(const AddLayerNormForwardArgs& a, cudaStream_t stream) {
  if (a.rows == 0 || a.cols == 0) return cudaSuccess;
  if (a.branch_dtype == Dtype::bfloat16)
    launch_forward<__nv_bfloat16>(a, stream);
  else
    launch_forward<float>(a, stream);
  return cudaGetLastError();
}

cudaError_t add_layer_norm_backward(const AddLayerNormBackwardArgs& a, cudaStream_t stream) {
  if (a.rows == 0 || a.cols == 0) return cudaSuccess;
  if (a.normed_dtype == Dtype::bfloat16)
    launch_backward<__nv_bfloat16>(a, stream);
  else
    launch_backward<float>(a, stream);
  return cudaGetLastError();
}

}  // namespace lrkit::train::cuda
