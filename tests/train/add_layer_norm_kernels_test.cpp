// lrkit's fused add + LayerNorm kernels (train/src/cuda/add_layer_norm_kernels.cuh)
// run on the CPU: each CUDA thread of a block is a std::thread, a warp's
// shuffles and a block's __syncthreads are barriers, __shared__ arrays are
// statics (blocks run one after another) and bfloat16 rounds to nearest even as
// CUDA's does. The kernels' index arithmetic, reductions, chunking and type
// handling are checked against float64 loops here without a GPU; the CUDA twins
// (add_layer_norm_test.cpp) check the compiled kernels on one.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace emulated {

struct dim3 {
  unsigned x, y, z;
  dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}  // NOLINT: CUDA's dim3 converts
};

class Barrier {
 public:
  explicit Barrier(int count) : count_(count) {}
  void arrive_and_wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    const int generation = generation_;
    if (++waiting_ == count_) {
      waiting_ = 0;
      ++generation_;
      released_.notify_all();
      return;
    }
    released_.wait(lock, [&] { return generation_ != generation; });
  }

 private:
  const int count_;
  int waiting_ = 0, generation_ = 0;
  std::mutex mutex_;
  std::condition_variable released_;
};

struct Block {
  explicit Block(const dim3& shape) : threads(static_cast<int>(shape.x * shape.y)), slots(shape.y) {
    for (unsigned w = 0; w < shape.y; ++w) warps.push_back(std::make_unique<Barrier>(static_cast<int>(shape.x)));
  }
  Barrier threads;
  std::vector<std::unique_ptr<Barrier>> warps;  // threadIdx.y is the warp (blockDim.x is 32)
  std::vector<std::array<float, 32>> slots;
};

thread_local dim3 threadIdx, blockIdx;
thread_local Block* block;

// Every block of the grid in turn, every thread of a block at once.
template <typename Kernel>
void launch(const dim3& grid, const dim3& shape, Kernel kernel) {
  for (unsigned by = 0; by < grid.y; ++by)
    for (unsigned bx = 0; bx < grid.x; ++bx) {
      Block context(shape);
      std::vector<std::thread> threads;
      for (unsigned ty = 0; ty < shape.y; ++ty)
        for (unsigned tx = 0; tx < shape.x; ++tx)
          threads.emplace_back([&, tx, ty] {
            threadIdx = dim3(tx, ty);
            blockIdx = dim3(bx, by);
            block = &context;
            kernel();
          });
      for (auto& t : threads) t.join();
    }
}

}  // namespace emulated

// CUDA's built-ins, as the kernels use them.
using emulated::blockIdx;
using emulated::threadIdx;
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(threads)
#define __shared__ static
inline float rsqrtf(float v) { return 1.0f / std::sqrt(v); }
inline void __syncthreads() { emulated::block->threads.arrive_and_wait(); }
inline float __shfl_xor_sync(unsigned /*mask*/, float v, int lane_mask) {
  auto& slots = emulated::block->slots[threadIdx.y];
  auto& warp = *emulated::block->warps[threadIdx.y];
  slots[threadIdx.x] = v;
  warp.arrive_and_wait();
  const float other = slots[threadIdx.x ^ static_cast<unsigned>(lane_mask)];
  warp.arrive_and_wait();
  return other;
}
struct __nv_bfloat16 {
  uint16_t bits;
};
inline float __bfloat162float(__nv_bfloat16 v) {
  const uint32_t wide = static_cast<uint32_t>(v.bits) << 16;
  float f;
  std::memcpy(&f, &wide, sizeof f);
  return f;
}
inline __nv_bfloat16 __float2bfloat16(float f) {  // round to nearest even (finite values)
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return {static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}

#include "add_layer_norm_kernels.cuh"

namespace lrkit::train::cuda {
namespace {

struct Case {
  int64_t rows, cols;
  bool bf16;     // branch, normed and their gradients in bfloat16 (autocast), else float32
  bool grad_h;   // h read on (its gradient comes in)
};

template <typename T>
std::vector<T> cast(const std::vector<float>& v) {
  std::vector<T> out;
  for (float f : v) {
    if constexpr (std::is_same_v<T, float>) out.push_back(f);
    else out.push_back(__float2bfloat16(f));
  }
  return out;
}
template <typename T>
std::vector<double> widen(const std::vector<T>& v) {
  std::vector<double> out;
  for (const auto& x : v) {
    if constexpr (std::is_same_v<T, float>) out.push_back(x);
    else out.push_back(__bfloat162float(x));
  }
  return out;
}

double relative_error(const std::vector<double>& got, const std::vector<double>& want) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    worst = std::max(worst, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return worst / scale;
}

template <typename T>
void run_case(const Case& c) {
  const auto n = static_cast<size_t>(c.rows * c.cols), cols = static_cast<size_t>(c.cols);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  const auto draw = [&](size_t count, float scale, float shift) {
    std::vector<float> v(count);
    for (auto& x : v) x = normal(rng) * scale + shift;
    return v;
  };
  const auto x = draw(n, 2, 0.5f), gamma = draw(cols, 0.3f, 1), beta = draw(cols, 0.2f, 0), grad_h = draw(n, 1, 0);
  const auto branch = cast<T>(draw(n, 1, 0)), grad_normed = cast<T>(draw(n, 1, 0));
  const Dtype type = std::is_same_v<T, float> ? Dtype::float32 : Dtype::bfloat16;

  std::vector<float> h(n), mean(c.rows), rstd(c.rows), grad_x(n);
  std::vector<T> normed(n), grad_branch(n);
  AddLayerNormForwardArgs f;
  f.x = x.data();
  f.branch = branch.data();
  f.branch_dtype = type;
  f.gamma = gamma.data();
  f.beta = beta.data();
  f.h = h.data();
  f.normed = normed.data();
  f.normed_dtype = type;
  f.mean = mean.data();
  f.rstd = rstd.data();
  f.rows = c.rows;
  f.cols = c.cols;
  const emulated::dim3 shape(kernels::kWarp, kernels::kRowsPerBlock);
  emulated::launch(kernels::row_blocks(c.rows), shape, [&] { kernels::forward_rows<T, T>(f); });

  const int64_t chunks = kernels::chunk_count(c.rows);
  std::vector<float> partials(2 * static_cast<size_t>(chunks) * cols);
  AddLayerNormBackwardArgs b;
  b.grad_normed = grad_normed.data();
  b.normed_dtype = type;
  b.grad_h = c.grad_h ? grad_h.data() : nullptr;
  b.h = h.data();
  b.mean = mean.data();
  b.rstd = rstd.data();
  b.gamma = gamma.data();
  b.grad_x = grad_x.data();
  b.grad_branch = grad_branch.data();
  b.branch_dtype = type;
  b.gamma_partial = partials.data();
  b.beta_partial = partials.data() + chunks * c.cols;
  b.rows = c.rows;
  b.cols = c.cols;
  b.chunks = chunks;
  if (c.grad_h)
    emulated::launch(kernels::row_blocks(c.rows), shape, [&] { kernels::backward_rows<T, T, true>(b); });
  else
    emulated::launch(kernels::row_blocks(c.rows), shape, [&] { kernels::backward_rows<T, T, false>(b); });
  emulated::launch(emulated::dim3(kernels::column_blocks(c.cols), static_cast<unsigned>(chunks)), shape,
                   [&] { kernels::backward_columns<T>(b); });

  // float64 reference from the same (rounded) inputs.
  const auto branch64 = widen(branch), grad_normed64 = widen(grad_normed);
  std::vector<double> h64(n), normed64(n), grad_x64(n), gamma64(cols), beta64(cols), mean64(c.rows), rstd64(c.rows);
  const auto width = static_cast<double>(c.cols);
  for (size_t r = 0; r < static_cast<size_t>(c.rows); ++r) {
    const size_t o = r * cols;
    double sum = 0, squares = 0;
    for (size_t j = 0; j < cols; ++j) sum += h64[o + j] = x[o + j] + branch64[o + j];
    const double mu = sum / width;
    for (size_t j = 0; j < cols; ++j) squares += (h64[o + j] - mu) * (h64[o + j] - mu);
    const double s = 1 / std::sqrt(squares / width + 1e-5);
    mean64[r] = mu;
    rstd64[r] = s;
    double mean_g = 0, mean_g_xhat = 0;
    for (size_t j = 0; j < cols; ++j) {
      const double xhat = (h64[o + j] - mu) * s, g = grad_normed64[o + j] * gamma[j];
      normed64[o + j] = xhat * gamma[j] + beta[j];
      mean_g += g / width;
      mean_g_xhat += g * xhat / width;
      gamma64[j] += grad_normed64[o + j] * xhat;
      beta64[j] += grad_normed64[o + j];
    }
    for (size_t j = 0; j < cols; ++j) {
      const double xhat = (h64[o + j] - mu) * s, g = grad_normed64[o + j] * gamma[j];
      grad_x64[o + j] = s * (g - mean_g - xhat * mean_g_xhat) + (c.grad_h ? grad_h[o + j] : 0.0);
    }
  }
  std::vector<double> gamma_sum(cols), beta_sum(cols);
  for (size_t k = 0; k < static_cast<size_t>(chunks); ++k)
    for (size_t j = 0; j < cols; ++j) {
      gamma_sum[j] += partials[k * cols + j];
      beta_sum[j] += partials[(static_cast<size_t>(chunks) + k) * cols + j];
    }
  const double rounding = c.bf16 ? 1e-2 : 1e-5;  // bfloat16 outputs keep 8 bits
  const std::string what = "rows " + std::to_string(c.rows) + " cols " + std::to_string(c.cols) + (c.bf16 ? " bf16" : " f32") +
                           (c.grad_h ? " grad_h" : "");
  EXPECT_LT(relative_error(widen(h), h64), 1e-6) << what;
  EXPECT_LT(relative_error(widen(mean), mean64), 1e-5) << what;
  EXPECT_LT(relative_error(widen(rstd), rstd64), 1e-5) << what;
  EXPECT_LT(relative_error(widen(normed), normed64), rounding) << what;
  EXPECT_LT(relative_error(widen(grad_x), grad_x64), 1e-4) << what;
  EXPECT_LT(relative_error(widen(grad_branch), grad_x64), c.bf16 ? rounding : 1e-4) << what;
  EXPECT_LT(relative_error(gamma_sum, gamma64), 1e-4) << what;
  EXPECT_LT(relative_error(beta_sum, beta64), 1e-4) << what;
}

TEST(AddLayerNormKernelsEmulated, MatchFloat64Loops) {
  run_case<float>({45, 37, false, true});      // rows not a multiple of a block's 8 warps; 37 columns: lanes idle
  run_case<float>({4, 300, false, false});     // ten columns a lane; no gradient into h
  run_case<__nv_bfloat16>({40, 200, true, true});   // 2 chunks of 20 rows
  run_case<__nv_bfloat16>({9, 64, true, false});
}

// One chunk per 32 rows, at most 256 (the column kernel's grid height); past 8,192 rows the chunks grow and the
// last ones may be empty (they write zeros), which the emulation above cannot afford to run.
TEST(AddLayerNormKernelsEmulated, ChunkCountIsOnePer32RowsUpTo256) {
  const std::vector<std::pair<int64_t, int64_t>> expected = {{1, 1}, {32, 1}, {33, 2}, {1000, 32}, {8192, 256}, {100000, 256}};
  for (const auto& [rows, chunks] : expected) EXPECT_EQ(kernels::chunk_count(rows), chunks) << rows << " rows";
}

}  // namespace
}  // namespace lrkit::train::cuda
