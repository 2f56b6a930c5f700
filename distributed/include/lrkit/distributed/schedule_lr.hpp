// An lrkit schedule as a LibTorch learning-rate scheduler, for a LibTorch
// training loop that steps a torch::optim::LRScheduler after each update:
//
//   lrkit::distributed::ScheduleLR scheduler(optimizer, lrkit::schedules::parse_schedule("wsd(peak=3e-4)", steps));
//   for (...) { loss.backward(); optimizer.step(); scheduler.step(); }
//
// Update i runs at schedule(i) exactly (the first group with a non-zero rate; group
// g at schedule(i) times its rate over that group's, as PyTorch's LambdaLR keeps
// them, so a group at 0 stays frozen: rate_ratios): the constructor sets
// schedule(start_step), and each step() the next update's rate. The ratios are read
// from the groups' rates at construction: a resumed loop's optimizer holds them,
// except where the schedule's rate at start_step is 0 (then pass ratios()).
// LibTorch's own schedulers leave the first step() without effect (StepLR: update i
// runs at gamma^(i-1)), PyTorch's do not; this one follows PyTorch and
// lrkit.torch.LRScheduler. Past the schedule's end the rate stays at its end value.
// With `cycle_momentum`, every group's momentum (AdamW's beta1, SGD's momentum) follows an onecycle or triangular
// schedule's cycle too, as PyTorch's OneCycleLR and CyclicLR set it (schedules::Schedule::cycled_momentum).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::distributed {

// The momentum range a ScheduleLR cycles: max where the rate is lowest, base at its peak (0 <= base <= max < 1).
struct CycledMomentum {
  double base = 0.85, max = 0.95;  // OneCycleLR's defaults; CyclicLR's are 0.8 and 0.9
};

class ScheduleLR : public torch::optim::LRScheduler {
 public:
  // `start_step`: the updates already done (a resumed loop passes what step_count() said when it saved). The
  // optimizer's parameter groups are those it has now: step() refuses a group added later, naming both counts.
  // `ratios`: the groups' proportions (rate_ratios.hpp), read from their rates when none are given; a loop resumed
  // where every group's rate is 0 (the schedule's rate there) must give those it saved from ratios(), and is
  // refused otherwise instead of running every group at one rate.
  // `cycle_momentum`: refused for a schedule that cycles none, a range outside 0 <= base <= max < 1, and an optimizer
  // other than AdamW or SGD.
  ScheduleLR(torch::optim::Optimizer& optimizer, schedules::Schedule schedule, int64_t start_step = 0,
             std::vector<double> ratios = {}, std::optional<CycledMomentum> cycle_momentum = std::nullopt);

  int64_t step_count() const { return static_cast<int64_t>(step_count_); }  // the next update's index
  const std::vector<double>& ratios() const { return ratios_; }

 protected:
  std::vector<double> get_lrs() override;

 private:
  std::vector<double> rates(int64_t step) const;
  void set_momentum(int64_t step);
  torch::optim::Optimizer& scheduled_;  // the base class keeps its own reference private
  schedules::Schedule schedule_;
  std::vector<double> ratios_;
  std::optional<CycledMomentum> cycle_momentum_;
};

}  // namespace lrkit::distributed
