#include "lrkit/distributed/schedule_lr.hpp"

#include <limits>
#include <stdexcept>
#include <string>

#include "lrkit/common/numbers.hpp"
#include "lrkit/distributed/hyperparameters.hpp"
#include "lrkit/distributed/rate_ratios.hpp"

namespace lrkit::distributed {

namespace {

constexpr const char* kWho = "ScheduleLR";

std::vector<double> scheduled_ratios(const torch::optim::Optimizer& optimizer, int64_t start_step, std::vector<double> given) {
  if (!given.empty()) return checked_ratios(optimizer, std::move(given), kWho);
  if (start_step > 0 && !rates_hold_ratios(optimizer)) throw std::invalid_argument(no_ratios_to_resume(optimizer, start_step, kWho));
  return rate_ratios(optimizer, kWho);
}

std::optional<CycledMomentum> checked_momentum(const schedules::Schedule& schedule, std::optional<CycledMomentum> m) {
  if (!m) return m;
  if (!schedules::is_momentum_range(m->base, m->max))
    throw std::invalid_argument("ScheduleLR: cycle_momentum goes from base to max with 0 <= base <= max < 1 (got "
                                "base " + format_number(m->base) + ", max " + format_number(m->max) + ")");
  if (!schedule.cycled_momentum(0, m->base, m->max))
    throw std::invalid_argument("ScheduleLR: cycle_momentum needs a schedule that cycles the momentum against its "
                                "rate, onecycle or triangular (with at most a warmup in front); '" +
                                schedule.to_spec() + "' does not");
  return m;
}

int64_t checked_start(int64_t start_step) {
  if (start_step < 0 || start_step >= static_cast<int64_t>(std::numeric_limits<unsigned>::max()))
    throw std::invalid_argument("ScheduleLR: start_step must be in [0, " + std::to_string(std::numeric_limits<unsigned>::max()) +
                                ") (got " + std::to_string(start_step) + ")");
  return start_step;
}

}  // namespace

ScheduleLR::ScheduleLR(torch::optim::Optimizer& optimizer, schedules::Schedule schedule, int64_t start_step,
                       std::vector<double> ratios, std::optional<CycledMomentum> cycle_momentum)
    : torch::optim::LRScheduler(optimizer), scheduled_(optimizer), schedule_(std::move(schedule)),
      ratios_(scheduled_ratios(optimizer, checked_start(start_step), std::move(ratios))),
      cycle_momentum_(checked_momentum(schedule_, cycle_momentum)) {
  step_count_ = static_cast<unsigned>(start_step);
  const auto first = rates(start_step);
  auto& groups = optimizer.param_groups();
  for (size_t g = 0; g < groups.size(); ++g) groups[g].options().set_lr(first[g]);
  set_momentum(start_step);
}

// LRScheduler::step() asks for the rates before it counts the step: step_count_ updates are done, so these are
// the rates of update step_count_ + 1 (and its momentum, set here: the base class sets rates only).
std::vector<double> ScheduleLR::get_lrs() {
  require_a_ratio_per_group(scheduled_, ratios_, kWho);
  set_momentum(static_cast<int64_t>(step_count_) + 1);
  return rates(static_cast<int64_t>(step_count_) + 1);
}

void ScheduleLR::set_momentum(int64_t step) {
  if (!cycle_momentum_) return;
  try {
    const auto momentum = schedule_.cycled_momentum(step, cycle_momentum_->base, cycle_momentum_->max);
    distributed::set_momentum(scheduled_, *momentum);  // checked_momentum: the schedule cycles it
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("ScheduleLR: cycle_momentum sets the beta1 of Adam and AdamW or the momentum of SGD "
                                "and RMSprop; this optimizer's groups have neither");
  }
}

std::vector<double> ScheduleLR::rates(int64_t step) const {
  const double rate = schedule_(step);
  std::vector<double> out;
  for (double ratio : ratios_) out.push_back(rate * ratio);
  return out;
}

}  // namespace lrkit::distributed
