// The lengths T' for which a schedule's spec, built for T' steps instead of its own T, gives a logged rate: what
// match_series tries when a loop gave its scheduler another run length (num_training_steps counted in micro-batches,
// or a resume with another max_steps).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules::detail {

// Whether a schedule can be rebuilt from its spec with another length or setting: it is bounded and tabulates
// nothing (a refined or table schedule would be read from its file and tabulated again for every value tried).
bool rebuildable_from_spec(const Schedule& schedule);

class LengthSearch {
 public:
  LengthSearch(const Schedule& schedule, double tolerance);

  // rebuildable_from_spec(schedule)
  bool possible() const { return possible_; }

  // Lengths T' other than the schedule's own, from T / kLargestMistakenFactor to kLargestMistakenFactor T, whose
  // schedule's rate at `step` is within the tolerance of `value`: the grid points that give it, and the whole T' on
  // either side of each place between grid points where the rate crosses it (at most kMostLengthsPerRow of them).
  std::vector<int64_t> lengths_giving(int64_t step, double value);

  // The spec built for `total` steps; nullptr where it cannot be built so (a WSD-S plan whose checkpoints lie past
  // it). Built once per length.
  const Schedule* built_for(int64_t total);

 private:
  double tolerance_;
  bool possible_;
  std::string spec_;
  int64_t total_;
  std::map<int64_t, std::optional<Schedule>> built_;
};

inline constexpr size_t kMostLengthsPerRow = 32;

}  // namespace lrkit::schedules::detail
