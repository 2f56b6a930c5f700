// How a scheduler's one rate enters an optimizer's parameter groups: each
// group keeps its proportion to the others, the ratios of the rates it was
// built with (as PyTorch's LambdaLR keeps them). ScheduleLR and HdetScheduler
// keep them so, as lrkit.torch's LRScheduler and HDET do in Python.
#pragma once

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"

namespace lrkit::distributed {

// Each group's rate over the first non-zero one's: a group at 0 stays at 0 (a frozen group); all at 0: all 1.
// Taking group 0 as the reference once made every ratio 1 when group 0 was a frozen one, so every group trained at
// the scheduled rate, the frozen one too. `who` is the scheduler.
inline std::vector<double> rate_ratios(const torch::optim::Optimizer& optimizer, const std::string& who) {
  const auto& groups = optimizer.param_groups();
  if (groups.empty()) throw std::invalid_argument(who + ": the optimizer has no parameter groups");
  double reference = 0.0;
  for (const auto& group : groups)
    if ((reference = group.options().get_lr()) != 0.0) break;
  std::vector<double> ratios;
  for (const auto& group : groups) ratios.push_back(reference == 0.0 ? 1.0 : group.options().get_lr() / reference);
  return ratios;
}

// Whether the groups' rates say how they relate: not where there are several and every one is 0. A loop resumed
// where its schedule's rate is 0 (a cyclic schedule's floor 0 at its budget) restores such an optimizer, and
// rate_ratios would give every group the same rate.
inline bool rates_hold_ratios(const torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  return groups.size() < 2 ||
         std::any_of(groups.begin(), groups.end(), [](const auto& group) { return group.options().get_lr() != 0.0; });
}

// Why the scheduler `who`, resumed at update `step`, cannot read its ratios from the optimizer.
inline std::string no_ratios_to_resume(const torch::optim::Optimizer& optimizer, int64_t step, const std::string& who) {
  return who + ": every one of the optimizer's " + std::to_string(optimizer.param_groups().size()) +
         " parameter groups is at rate 0 at update " + std::to_string(step) + " (the schedule's rate there), so they "
         "hold no proportion to each other: pass the ratios() of the scheduler the run had before";
}

// The optimizer still has the groups `ratios` are for: a group added after its scheduler `who` was made has none.
inline void require_a_ratio_per_group(const torch::optim::Optimizer& optimizer, const std::vector<double>& ratios,
                                      const std::string& who) {
  const size_t groups = optimizer.param_groups().size();
  if (groups != ratios.size())
    throw std::invalid_argument(who + ": the optimizer has " + std::to_string(groups) + " parameter groups but had " +
                                std::to_string(ratios.size()) + " when the scheduler was made; make the scheduler "
                                "after adding every group");
}

// Ratios a resumed loop gives (those it saved from its scheduler's ratios()): one finite number >= 0 per group.
inline std::vector<double> checked_ratios(const torch::optim::Optimizer& optimizer, std::vector<double> ratios,
                                          const std::string& who) {
  if (ratios.size() != optimizer.param_groups().size())
    throw std::invalid_argument(who + ": " + std::to_string(ratios.size()) + " ratios given for the optimizer's " +
                                std::to_string(optimizer.param_groups().size()) + " parameter groups");
  for (size_t g = 0; g < ratios.size(); ++g)
    if (!std::isfinite(ratios[g]) || ratios[g] < 0)
      throw std::invalid_argument(who + ": ratio " + std::to_string(g) + " is " + format_number(ratios[g]) +
                                  "; a group's ratio is a finite number >= 0");
  return ratios;
}

// Group g gets lr * ratios[g]; `who` is the scheduler.
inline void set_learning_rates(torch::optim::Optimizer& optimizer, double lr, const std::vector<double>& ratios,
                               const std::string& who) {
  require_a_ratio_per_group(optimizer, ratios, who);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(lr * ratios[g]);
}

}  // namespace lrkit::distributed
