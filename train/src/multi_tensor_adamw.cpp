#include "lrkit/train/multi_tensor_adamw.hpp"

#include <torch/version.h>

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace lrkit::train {

namespace {

// torch::optim keys a parameter's state by its TensorImpl: the pointer itself in recent LibTorch (void*), its
// printed address in older ones (std::string, as c10::guts::to_string wrote it). The key type is read off the
// state map, so any LibTorch in between builds and shares the state with torch::optim's save and load.
template <typename Key>
Key key_of(const torch::Tensor& p) {
  if constexpr (std::is_same_v<Key, std::string>) {
    std::ostringstream text;
    text << p.unsafeGetTensorImpl();
    return text.str();
  } else {
    return p.unsafeGetTensorImpl();
  }
}

constexpr bool kHasFusedAdamW = TORCH_VERSION_MAJOR >= 2;

}  // namespace

MultiTensorAdamW::MultiTensorAdamW(std::vector<torch::optim::OptimizerParamGroup> groups,
                                   torch::optim::AdamWOptions defaults, Kernel kernel)
    : torch::optim::AdamW(std::move(groups), defaults), kernel_(kernel) {
  if (defaults.amsgrad()) throw std::invalid_argument("MultiTensorAdamW: amsgrad is not supported");
}

bool MultiTensorAdamW::fuses(const torch::Device& device) const {
  if (kernel_ == Kernel::foreach) return false;
  const bool fusable = kHasFusedAdamW && device.is_cuda();
  if (kernel_ == Kernel::fused && !fusable)
    throw std::invalid_argument("MultiTensorAdamW: the fused kernel needs CUDA tensors and LibTorch 2 (this is " +
                                std::string(TORCH_VERSION) + ", tensors on " + device.str() + ")");
  return fusable;
}

torch::Tensor MultiTensorAdamW::step(LossClosure closure) {
  torch::NoGradGuard no_grad;
  torch::Tensor loss;
  if (closure != nullptr) {
    at::AutoGradMode enable_grad(true);
    loss = closure();
  }
  for (auto& group : param_groups_) step_group(group);
  return loss;
}

void MultiTensorAdamW::step_group(torch::optim::OptimizerParamGroup& group) {
  const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
  const double lr = options.lr(), weight_decay = options.weight_decay(), eps = options.eps();
  const auto [beta1, beta2] = options.betas();
  std::vector<torch::Tensor> params, grads, exp_avgs, exp_avg_sqs;
  std::vector<torch::optim::AdamWParamState*> states;
  for (const auto& p : group.params()) {
    if (!p.grad().defined()) continue;
    TORCH_CHECK(!p.grad().is_sparse(), "AdamW does not support sparse gradients");
    const auto key = key_of<std::decay_t<decltype(state_)>::key_type>(p);
    auto found = state_.find(key);
    if (found == state_.end()) {
      auto state = std::make_unique<torch::optim::AdamWParamState>();
      state->exp_avg(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      state->exp_avg_sq(torch::zeros_like(p, torch::MemoryFormat::Preserve));
      found = state_.emplace(key, std::move(state)).first;
    }
    auto& state = static_cast<torch::optim::AdamWParamState&>(*found->second);
    params.push_back(p);
    grads.push_back(p.grad());
    exp_avgs.push_back(state.exp_avg());
    exp_avg_sqs.push_back(state.exp_avg_sq());
    states.push_back(&state);
  }
  if (params.empty()) return;

  if (fuses(params.front().device())) {
    std::vector<torch::Tensor> steps;
    for (size_t i = 0; i < params.size(); ++i) {
      auto& [count, mirror] = device_steps_[params[i].unsafeGetTensorImpl()];
      if (!count.defined() || mirror != states[i]->step())
        count = torch::full({}, static_cast<double>(states[i]->step()), params[i].options().dtype(torch::kFloat));
      states[i]->step(states[i]->step() + 1);
      mirror = states[i]->step();
      steps.push_back(count);
    }
    at::_foreach_add_(steps, 1);  // PyTorch's fused AdamW counts before the kernel reads
#if TORCH_VERSION_MAJOR >= 2
    at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr, beta1, beta2, weight_decay,
                      eps, /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/{}, /*found_inf=*/{});
#endif
    return;
  }

  // torch::optim::AdamW's arithmetic, one op per group instead of one per parameter.
  std::vector<at::Scalar> denominators, step_sizes;
  for (auto* state : states) {
    state->step(state->step() + 1);
    const double bias_correction1 = 1 - std::pow(beta1, static_cast<double>(state->step()));
    const double bias_correction2 = 1 - std::pow(beta2, static_cast<double>(state->step()));
    denominators.emplace_back(std::sqrt(bias_correction2));
    step_sizes.emplace_back(-lr / bias_correction1);
  }
  if (weight_decay != 0) at::_foreach_mul_(params, 1 - lr * weight_decay);
  at::_foreach_mul_(exp_avgs, beta1);
  at::_foreach_add_(exp_avgs, grads, 1 - beta1);
  at::_foreach_mul_(exp_avg_sqs, beta2);
  at::_foreach_addcmul_(exp_avg_sqs, grads, grads, 1 - beta2);
  auto denominator = at::_foreach_sqrt(exp_avg_sqs);
  at::_foreach_div_(denominator, denominators);
  at::_foreach_add_(denominator, eps);
  at::_foreach_addcdiv_(params, exp_avgs, denominator, step_sizes);
}

}  // namespace lrkit::train
