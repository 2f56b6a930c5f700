// The length of the run a log records, where it records one: a Hugging Face Trainer's max_steps, in its
// trainer_state.json, its W&B run's config and its MLflow run's params.
#pragma once

#include <cmath>
#include <cstdint>

namespace lrkit::schedules {

// `max_steps` as Series::run_steps: a whole number of steps, else 0 (a Trainer's TrainingArguments hold -1 where
// the epochs set the length).
inline int64_t planned_run_steps(double max_steps) {
  const bool whole = max_steps >= 1 && max_steps < 1e15 && max_steps == std::floor(max_steps);
  return whole ? static_cast<int64_t>(max_steps) : 0;
}

}  // namespace lrkit::schedules
