// Launches of lrkit's fused residual add + LayerNorm kernels (add_layer_norm_kernels.cuh), one instance per
// combination of element types.
#include "add_layer_norm_kernels.hpp"

#include "add_layer_norm_kernels.cuh"

namespace lrkit::train::cuda {
namespace {

using namespace kernels;

dim3 row_grid(int64_t rows) { return dim3(row_blocks(rows)); }
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
  const dim3 grid(column_blocks(a.cols), static_cast<unsigned>(a.chunks));
  backward_columns<Normed><<<grid, kBlock, 0, stream>>>(a);
}

}  // namespace

int64_t add_layer_norm_chunks(int64_t rows) { return chunk_count(rows); }

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
