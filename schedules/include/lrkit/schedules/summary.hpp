// The facts a person checks first about a schedule over a run of N steps:
// peak, where warmup ends and decay starts, the final value, WSD-S checkpoints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules {

struct Summary {
  int64_t steps = 0;  // the table spans updates 0..steps
  double peak = 0.0;
  int64_t peak_step = 0;
  int64_t warmup_end = 0;               // first step after the warmup (0: none)
  std::optional<int64_t> decay_start;   // first step of the first decay phase
  double final_value = 0.0;             // value at `steps`
  std::vector<int64_t> checkpoints;
  std::vector<Phase> phases;            // clipped to [0, steps]
};

Summary summarize(const Schedule& schedule, int64_t steps);

// Above this peak lrkit warns (schedule, train): no optimizer it drives trains
// there, so such a value is most likely a typo (1e3 for 1e-3); peaks of 1 or 2 draw unit-scale shapes.
constexpr double kHighestUsualRate = 10.0;

// "the schedule peaks at 1e+308 (step 0); learning rates above 10 rarely train"
// when the summary's peak is above kHighestUsualRate, else empty.
std::string peak_warning(const Summary& summary);

}  // namespace lrkit::schedules
