// The one way a learning rate enters a LibTorch optimizer: every parameter
// group gets it (the trainer and the HDET scheduler both go through here).
#pragma once

#include <torch/torch.h>

namespace lrkit::train {

inline void set_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

}  // namespace lrkit::train
