#include "lrkit/schedules/usable_rates.hpp"

#include <cmath>
#include <string>

#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/spec_error.hpp"

namespace lrkit::schedules {

void require_usable_rates(const Schedule& schedule, int64_t steps) {
  const std::string spec = schedule.to_spec();
  const std::string family = spec.substr(0, spec.find('('));
  if (steps > kLongestCheckedRun)
    throw SpecError(spec, 0, family,
                    "a run of " + std::to_string(steps) + " steps is longer than " + std::to_string(kLongestCheckedRun) +
                        ", the most lrkit checks step by step (for a run without a planned end, use a schedule without one)");
  for (int64_t step = 0; step <= steps; ++step) {
    const double lr = schedule(step);
    if (lr >= 0.0 && lr <= kLargestUsableRate) continue;  // false for NaN
    throw SpecError(spec, 0, family,
                    "it is " + format_number(lr) + " at step " + std::to_string(step) + " of 0.." + std::to_string(steps) +
                        "; a learning rate must be a number in [0, " + format_number(kLargestUsableRate) +
                        "] (float32's largest)");
  }
}

}  // namespace lrkit::schedules
