// The one way scalar hyper-parameters enter a LibTorch optimizer (the trainer,
// HDET's replicas and the drop-in scheduler all go through here).
#pragma once

#include <torch/torch.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::distributed {

// Every parameter group gets the rate.
inline void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

// What a scheduler keeps of the rates the optimizer's groups have now (as PyTorch's LambdaLR keeps them): each
// group's rate over the first non-zero one's. A group at 0 stays at 0 (a frozen group); all at 0: all 1. Taking
// group 0 as the reference once made every ratio 1 when group 0 was a frozen one, so every group trained at the
// scheduled rate, the frozen one too.
inline std::vector<double> rate_ratios(const torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  if (groups.empty()) throw std::invalid_argument("the optimizer has no parameter groups");
  double reference = 0.0;
  for (const auto& group : groups)
    if ((reference = group.options().get_lr()) != 0.0) break;
  std::vector<double> ratios;
  for (const auto& group : groups) ratios.push_back(reference == 0.0 ? 1.0 : group.options().get_lr() / reference);
  return ratios;
}

// The optimizer still has the groups `ratios` were read from: a group added after its scheduler `who` was made has
// no ratio.
inline void require_a_ratio_per_group(const torch::optim::Optimizer& optimizer, const std::vector<double>& ratios,
                                      const std::string& who) {
  const size_t groups = optimizer.param_groups().size();
  if (groups != ratios.size())
    throw std::invalid_argument(who + ": the optimizer has " + std::to_string(groups) + " parameter groups but had " +
                                std::to_string(ratios.size()) + " when the scheduler was made; make the scheduler "
                                "after adding every group");
}

// Group g gets lr * ratios[g] (rate_ratios: the groups' own proportions); `who` is the scheduler.
inline void set_learning_rates(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& ratios,
                               const std::string& who) {
  require_a_ratio_per_group(optimizer, ratios, who);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lr * ratios[g]);
}

// Weight decay of one parameter group (the trainer's group 0 holds the decayed matrices).
inline void set_weight_decay(torch::optim::Optimizer& optimizer, size_t group, double weight_decay) {
  auto& options = optimizer.param_groups().at(group).options();
  if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
    adamw->weight_decay(weight_decay);
  } else if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
    sgd->weight_decay(weight_decay);
  } else {
    throw std::invalid_argument("set_weight_decay: only AdamW and SGD parameter groups are supported");
  }
}

}  // namespace lrkit::distributed
