#include "lrkit/distributed/schedule_lr.hpp"

#include <limits>
#include <stdexcept>
#include <string>

namespace lrkit::distributed {

namespace {

std::vector<double> initial_ratios(torch::optim::Optimizer& optimizer) {
  const auto& groups = optimizer.param_groups();
  if (groups.empty()) throw std::invalid_argument("ScheduleLR: the optimizer has no parameter groups");
  const double first = groups.front().options().get_lr();
  std::vector<double> ratios;
  for (const auto& group : groups) ratios.push_back(first == 0 ? 1.0 : group.options().get_lr() / first);
  return ratios;
}

}  // namespace

ScheduleLR::ScheduleLR(torch::optim::Optimizer& optimizer, schedules::Schedule schedule, int64_t start_step)
    : torch::optim::LRScheduler(optimizer), scheduled_(optimizer), schedule_(std::move(schedule)), ratios_(initial_ratios(optimizer)) {
  if (start_step < 0 || start_step >= static_cast<int64_t>(std::numeric_limits<unsigned>::max()))
    throw std::invalid_argument("ScheduleLR: start_step must be in [0, " + std::to_string(std::numeric_limits<unsigned>::max()) +
                                ") (got " + std::to_string(start_step) + ")");
  step_count_ = static_cast<unsigned>(start_step);
  const auto first = rates(start_step);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(first[g]);
}

// LRScheduler::step() asks for the rates before it counts the step: step_count_ updates are done, so these are
// the rates of update step_count_ + 1.
std::vector<double> ScheduleLR::get_lrs() {
  if (scheduled_.param_groups().size() != ratios_.size())
    throw std::invalid_argument("ScheduleLR: the optimizer has " + std::to_string(scheduled_.param_groups().size()) +
                                " parameter groups but had " + std::to_string(ratios_.size()) +
                                " when the scheduler was made; make the scheduler after adding every group");
  return rates(static_cast<int64_t>(step_count_) + 1);
}

std::vector<double> ScheduleLR::rates(int64_t step) const {
  const double rate = schedule_(step);
  std::vector<double> out;
  for (double ratio : ratios_) out.push_back(rate * ratio);
  return out;
}

}  // namespace lrkit::distributed
