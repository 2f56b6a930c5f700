#include "lrkit/distributed/schedule_lr.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "lrkit/distributed/hyperparameters.hpp"

namespace lrkit::distributed {

namespace {

std::vector<double> initial_ratios(const torch::optim::Optimizer& optimizer) {
  try {
    return rate_ratios(optimizer);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("ScheduleLR: ") + e.what());
  }
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
  require_a_ratio_per_group(scheduled_, ratios_, "ScheduleLR");
  return rates(static_cast<int64_t>(step_count_) + 1);
}

std::vector<double> ScheduleLR::rates(int64_t step) const {
  const double rate = schedule_(step);
  std::vector<double> out;
  for (double ratio : ratios_) out.push_back(rate * ratio);
  return out;
}

}  // namespace lrkit::distributed
