// Which one number of a spec, given another value, makes the schedule follow a log: the setting a loop's scheduler
// was given otherwise (a warmup counted in micro-batches, another floor, a peak beside a fixed floor, a milestone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules::detail {

// One number of a spec: a key's value (warmup=100), a positional argument's (cosine(3e-4): peak), an entry of a list
// of numbers (milestones=[50, 120]), or a key the outermost call leaves at its default that is looked for
// too (warmup in steps, floor in percent of the peak), inserted before its closing parenthesis.
struct SpecNumber {
  std::string name;     // the key's: "warmup", "peak", "milestones"
  size_t position = 0;  // where its text starts in the spec
  size_t length = 0;    // its text's length; 0 for a key inserted at `position`
  double value = 0.0;   // the number written (2 for 2%); 0 for an inserted key
  bool percent = false;
  bool whole = false;   // written as a whole number (steps, or a whole peak)
  // An entry of a list of numbers: where the list's text ("[50, 120]") starts in the spec, and its length; else 0.
  size_t list_position = 0, list_length = 0;
  // The values looked for: from value / 64 to 64 value; an inserted warmup from 1 to T steps, an inserted floor from
  // 0.0001 % to 100 % of the peak, or from 1e-6 peak to the peak (both forms are tried; the plainer is named).
  double low = 0.0, high = 0.0;
};

// The numbers of `spec` (canonical, as Schedule::to_spec writes it) for a run of `total` steps, outermost call first,
// at most kMostSpecNumbers, and the keys inserted after them.
inline constexpr size_t kMostSpecNumbers = 24;
std::vector<SpecNumber> spec_numbers(const std::string& spec, int64_t total);

// `spec` with `number` written as `value` (a key inserted as ", NAME=VALUE").
std::string with_number(const std::string& spec, const SpecNumber& number, double value);

struct SettingFound {
  SpecNumber number;
  std::string given;  // as written in the schedule's spec ("" for an inserted key); a list entry's whole list
  std::string value;  // as written in `spec`: "500", "10%", "0.0006"; a list entry's whole list: "[50, 130]"
  std::string spec;   // the spec the rows follow
  // The span of values around `value` that every row fits too (rows that cannot pin the setting), as written; both
  // `value` where they pin it. highest_is_last: the span reaches the largest value tried.
  std::string lowest, highest;
  bool highest_is_last = false;
};

// The first number of the schedule's spec that, given another value, makes every row follow it: the values tried
// (SpecNumber::low to high) are those that give its logged rate to one of the rows `probes`, written as plainly as
// every row allows (the fewest significant digits), with the span of values the rows fit. nullopt where no number
// does, or the schedule cannot be rebuilt from its spec (no end, or tabulated: refined, table).
std::optional<SettingFound> setting_explaining(const Schedule& schedule, const std::vector<int64_t>& steps,
                                               const std::vector<double>& values, double tolerance,
                                               const std::vector<size_t>& probes);

}  // namespace lrkit::schedules::detail
