#include "lrkit/train/trained_schedule.hpp"

#include <stdexcept>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::train {

std::optional<RateChange> first_rate_change(const std::string& trained_spec, int64_t trained_steps, const std::string& spec,
                                            int64_t steps, int64_t updates) {
  if (trained_spec == spec && trained_steps == steps) return std::nullopt;
  const auto trained = schedules::parse_schedule(trained_spec, trained_steps);
  const auto now = schedules::parse_schedule(spec, steps);
  for (int64_t step = 0; step < updates; ++step)
    if (trained(step) != now(step)) return RateChange{step, trained(step), now(step)};
  return std::nullopt;
}

std::optional<RateChange> first_rate_change(const std::string& checkpoint, const CheckpointInfo& info,
                                            const std::string& spec, int64_t steps) {
  // A checkpoint written before it recorded its run's length was trained for the length asked now.
  const int64_t trained_steps = info.schedule_steps > 0 ? info.schedule_steps : steps;
  if (info.schedule_spec == spec && trained_steps == steps) return std::nullopt;
  try {
    return first_rate_change(info.schedule_spec, trained_steps, spec, steps, info.step);
  } catch (const std::exception& e) {  // a table's file gone since, say
    throw std::invalid_argument("checkpoint '" + checkpoint + "' was trained with schedule '" + info.schedule_spec +
                                "'; its rates cannot be compared with those of '" + spec + "': " + e.what());
  }
}

}  // namespace lrkit::train
