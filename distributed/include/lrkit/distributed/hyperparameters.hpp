// The one way scalar hyper-parameters enter a LibTorch optimizer (the trainer,
// HDET's replicas and the drop-in scheduler all go through here).
#pragma once

#include <torch/torch.h>

#include <stdexcept>
#include <tuple>

namespace lrkit::distributed {

// Every parameter group gets the rate.
inline void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
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

// The momentum of every parameter group: beta1 of Adam and AdamW (beta2 stays), the momentum of SGD and RMSprop; as
// PyTorch's OneCycleLR and CyclicLR set it with cycle_momentum (beta1 where a group has betas, else its momentum).
inline void set_momentum(torch::optim::Optimizer& optimizer, double momentum) {
  for (auto& group : optimizer.param_groups()) {
    auto& options = group.options();
    if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&options)) {
      adamw->betas({momentum, std::get<1>(adamw->betas())});
    } else if (auto* adam = dynamic_cast<torch::optim::AdamOptions*>(&options)) {
      adam->betas({momentum, std::get<1>(adam->betas())});
    } else if (auto* sgd = dynamic_cast<torch::optim::SGDOptions*>(&options)) {
      sgd->momentum(momentum);
    } else if (auto* rmsprop = dynamic_cast<torch::optim::RMSpropOptions*>(&options)) {
      rmsprop->momentum(momentum);
    } else {
      throw std::invalid_argument("set_momentum: only Adam, AdamW, SGD and RMSprop parameter groups have a momentum");
    }
  }
}

}  // namespace lrkit::distributed
