// The check every consumer that applies a schedule's rates runs first (lrkit train, sweep, schedule, the Python
// schedulers): a value no optimizer can apply is refused before a run starts, not met as NaN weights or an
// overflow error in the middle of it.
#pragma once

#include <cstdint>
#include <limits>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules {

// Beyond it, scaling a float32 parameter's update overflows (LibTorch refuses such a factor; PyTorch's eager
// optimizers too). Every rate the check accepts lies in [0, kLargestUsableRate].
inline constexpr double kLargestUsableRate = std::numeric_limits<float>::max();

// The longest run whose rates are checked, and so the longest lrkit trains, sweeps or tabulates: the check
// evaluates every step (10 to 50 ns each, so up to a few seconds here), and no training run is that long.
inline constexpr int64_t kLongestCheckedRun = 100'000'000;

// Throws SpecError (on the schedule's canonical spec, at its first call) naming the first of steps 0..steps whose
// value is NaN, infinite, negative or above kLargestUsableRate, and for `steps` above kLongestCheckedRun, e.g.
// "... ('exponential'): it is inf at step 2 of 0..5; a learning rate must be a number in [0, 3.4e+38] (float32's largest)".
void require_usable_rates(const Schedule& schedule, int64_t steps);

}  // namespace lrkit::schedules
