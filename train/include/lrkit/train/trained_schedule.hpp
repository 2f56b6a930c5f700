// Whether a run resumed from a checkpoint goes on as the run it continues: every update it trained keeps its rate.
// The spec or train.steps may change where they do: a WSD run's stable phase stretched to a longer run (a budget
// sweep extended to a larger budget), a constant run resumed for more steps. A cosine resumed for another length
// would jump to other rates: refused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "lrkit/train/checkpoint.hpp"

namespace lrkit::train {

// An update the checkpoint trained at one rate that the new schedule gives another.
struct RateChange {
  int64_t step = 0;
  double then = 0, now = 0;
};

// The first update before `updates` at which `spec` over `steps` gives another rate than `trained_spec` over
// `trained_steps` (the run length it was built for), or nothing. Throws what building either schedule throws.
std::optional<RateChange> first_rate_change(const std::string& trained_spec, int64_t trained_steps, const std::string& spec,
                                            int64_t steps, int64_t updates);

// The same for the updates a checkpoint trained (before info.step) under its recorded schedule. Throws
// std::invalid_argument naming the checkpoint where a schedule cannot be built (a table's file gone since).
std::optional<RateChange> first_rate_change(const std::string& checkpoint, const CheckpointInfo& info,
                                            const std::string& spec, int64_t steps);

}  // namespace lrkit::train
