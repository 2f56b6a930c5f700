#include "lrkit/train/add_layer_norm.hpp"

#ifdef LRKIT_CUDA_KERNELS
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>

#include "cuda/add_layer_norm_kernels.hpp"
#endif

namespace lrkit::train {

#ifdef LRKIT_CUDA_KERNELS
namespace {

cuda::Dtype kernel_dtype(const torch::Tensor& t) {
  return t.scalar_type() == torch::kBFloat16 ? cuda::Dtype::bfloat16 : cuda::Dtype::float32;
}

void check_launch(cudaError_t error, const char* what) {
  TORCH_CHECK(error == cudaSuccess, "lrkit's fused add + LayerNorm ", what, ": ", cudaGetErrorString(error));
}

// Inputs x, branch, gamma, beta, eps; outputs h = x + branch and normed = LayerNorm(h) in branch's type.
class FusedAddLayerNorm : public torch::autograd::Function<FusedAddLayerNorm> {
 public:
  static torch::autograd::variable_list forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x_in,
                                                const torch::Tensor& branch_in, const torch::Tensor& gamma,
                                                const torch::Tensor& beta, double eps) {
    const c10::cuda::CUDAGuard device_guard(x_in.device());
    const auto x = x_in.contiguous(), branch = branch_in.contiguous();
    const int64_t cols = x.size(-1), rows = x.numel() / cols;
    auto h = torch::empty_like(x);
    auto normed = torch::empty(x.sizes(), x.options().dtype(branch.scalar_type()));
    auto mean = torch::empty({rows}, x.options()), rstd = torch::empty({rows}, x.options());
    cuda::AddLayerNormForwardArgs a;
    a.x = x.data_ptr<float>();
    a.branch = branch.data_ptr();
    a.branch_dtype = kernel_dtype(branch);
    a.gamma = gamma.data_ptr<float>();
    a.beta = beta.data_ptr<float>();
    a.h = h.data_ptr<float>();
    a.normed = normed.data_ptr();
    a.normed_dtype = kernel_dtype(normed);
    a.mean = mean.data_ptr<float>();
    a.rstd = rstd.data_ptr<float>();
    a.rows = rows;
    a.cols = cols;
    a.eps = static_cast<float>(eps);
    check_launch(cuda::add_layer_norm_forward(a, at::cuda::getCurrentCUDAStream(x.device().index()).stream()), "forward");
    ctx->save_for_backward({h, gamma, mean, rstd});
    ctx->saved_data["branch_type"] = static_cast<int64_t>(branch.scalar_type());
    ctx->set_materialize_grads(false);  // h's gradient is undefined where nothing else reads h (the last norm)
    return {h, normed};
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx, torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto &h = saved[0], &gamma = saved[1], &mean = saved[2], &rstd = saved[3];
    const auto branch_type = static_cast<torch::ScalarType>(ctx->saved_data["branch_type"].toInt());
    const auto grad_h = grads[0].defined() ? grads[0].contiguous() : torch::Tensor();
    if (!grads[1].defined()) {  // only h was read on: the add passes its gradient through
      const auto grad_branch = grad_h.defined() ? grad_h.to(branch_type) : torch::Tensor();
      return {grad_h, grad_branch, torch::Tensor(), torch::Tensor(), torch::Tensor()};
    }
    const c10::cuda::CUDAGuard device_guard(h.device());
    const auto grad_normed = grads[1].contiguous();
    const int64_t cols = h.size(-1), rows = h.numel() / cols;
    auto grad_x = torch::empty_like(h);
    auto grad_branch = torch::empty(h.sizes(), h.options().dtype(branch_type));
    const int64_t chunks = cuda::add_layer_norm_chunks(rows);
    auto partials = torch::empty({2, chunks, cols}, h.options());
    cuda::AddLayerNormBackwardArgs a;
    a.grad_normed = grad_normed.data_ptr();
    a.normed_dtype = kernel_dtype(grad_normed);
    a.grad_h = grad_h.defined() ? grad_h.data_ptr<float>() : nullptr;
    a.h = h.data_ptr<float>();
    a.mean = mean.data_ptr<float>();
    a.rstd = rstd.data_ptr<float>();
    a.gamma = gamma.data_ptr<float>();
    a.grad_x = grad_x.data_ptr<float>();
    a.grad_branch = grad_branch.data_ptr();
    a.branch_dtype = kernel_dtype(grad_branch);
    a.gamma_partial = partials[0].data_ptr<float>();
    a.beta_partial = partials[1].data_ptr<float>();
    a.rows = rows;
    a.cols = cols;
    a.chunks = chunks;
    check_launch(cuda::add_layer_norm_backward(a, at::cuda::getCurrentCUDAStream(h.device().index()).stream()), "backward");
    const auto sums = partials.sum(1);  // [2, cols], in a fixed order
    return {grad_x, grad_branch, sums[0], sums[1], torch::Tensor()};
  }
};

bool kernel_applies(const torch::Tensor& x, const torch::Tensor& branch, const torch::nn::LayerNorm& norm) {
  const auto& shape = norm->options.normalized_shape();
  return x.is_cuda() && x.scalar_type() == torch::kFloat && x.dim() >= 1 && x.numel() > 0 && branch.defined() &&
         branch.sizes() == x.sizes() && branch.device() == x.device() &&
         (branch.scalar_type() == torch::kFloat || branch.scalar_type() == torch::kBFloat16) && shape.size() == 1 &&
         shape[0] == x.size(-1) && norm->weight.defined() && norm->bias.defined() &&
         norm->weight.scalar_type() == torch::kFloat && norm->bias.scalar_type() == torch::kFloat &&
         norm->weight.device() == x.device() && norm->bias.device() == x.device() &&  // else the ops' own error
         norm->weight.is_contiguous() && norm->bias.is_contiguous();
}

}  // namespace
#endif

bool add_layer_norm_kernel_built() {
#ifdef LRKIT_CUDA_KERNELS
  return true;
#else
  return false;
#endif
}

NormedStream add_layer_norm(const torch::Tensor& x, const torch::Tensor& branch, torch::nn::LayerNorm& norm,
                            [[maybe_unused]] bool fused) {
#ifdef LRKIT_CUDA_KERNELS
  if (fused && kernel_applies(x, branch, norm)) {
    const auto out = FusedAddLayerNorm::apply(x, branch, norm->weight, norm->bias, norm->options.eps());
    return {out[0], out[1]};
  }
#endif
  const auto h = branch.defined() ? x + branch : x;
  return {h, norm->forward(h)};
}

}  // namespace lrkit::train
