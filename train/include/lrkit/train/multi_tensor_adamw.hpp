// LibTorch's AdamW (same options, parameter groups, state and checkpoint
// format: torch::optim::AdamW's serialize reads and writes it) with the step
// done per parameter group instead of per parameter: on CUDA with LibTorch 2
// one fused kernel (at::_fused_adamw_, PyTorch's AdamW(fused=True)), else the
// multi-tensor _foreach_ ops (PyTorch's foreach=True), which on the CPU run
// the same arithmetic as torch::optim::AdamW and so match it bit for bit.
// LibTorch's own step launches about ten kernels per parameter.
#pragma once

#include <torch/torch.h>

#include <unordered_map>
#include <utility>
#include <vector>

namespace lrkit::train {

class MultiTensorAdamW : public torch::optim::AdamW {
 public:
  enum class Kernel { automatic, foreach, fused };

  MultiTensorAdamW(std::vector<torch::optim::OptimizerParamGroup> groups, torch::optim::AdamWOptions defaults,
                   Kernel kernel = Kernel::automatic);
  torch::Tensor step(LossClosure closure = nullptr) override;
  // Whether a group of tensors on `device` is stepped by the fused kernel.
  bool fuses(const torch::Device& device) const;

 private:
  void step_group(torch::optim::OptimizerParamGroup& group);
  Kernel kernel_;
  // The fused kernel counts steps in device tensors; each mirrors its state's int64 step (what LibTorch
  // serializes, the one truth) and is rebuilt when that changed behind it (a checkpoint loaded).
  std::unordered_map<const void*, std::pair<torch::Tensor, int64_t>> device_steps_;
};

}  // namespace lrkit::train
