// Every collective refuses a tensor that is not on its group's device, in one
// line naming both, before the backend does so with a backtrace (NCCL) or
// silently stages it through another device (Gloo).
#pragma once

#include <torch/torch.h>

#include <stdexcept>
#include <string>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

inline void check_device(const Collective& collective, const torch::Tensor& tensor, const char* operation) {
  if (tensor.device() == collective.device()) return;
  throw std::invalid_argument(std::string(operation) + " of a tensor on " + tensor.device().str() +
                              " in a group whose tensors live on " + collective.device().str());
}

}  // namespace lrkit::distributed
