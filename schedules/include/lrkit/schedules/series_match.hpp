// Whether a logged series of learning rates (a run log's /train/lr, a CSV a training loop wrote) follows a schedule,
// and where it does not, which of the common loop mistakes explains it: a scheduler stepped before its optimizer
// (the schedule read ahead), one that started over at a resume (its state not restored), one stepped per micro-batch
// or once per several updates (the schedule run faster or slower), one built for another run length (from the start,
// or from a resume on), or another base rate (every rate scaled), or one other setting of the spec (its warmup, its
// floor, a milestone).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules {

// How far each mistake is looked for: a scheduler up to 16 steps ahead or behind, and up to 64 times as fast or slow
// (gradient accumulation over up to 64 micro-batches).
inline constexpr int64_t kLargestMistakenShift = 16;
inline constexpr int64_t kLargestMistakenFactor = 64;
// In a log of every k-th step, a restart is looked for up to this many steps before the first row after it.
inline constexpr int64_t kLongestRestartSearch = 100'000;
// A schedule built for another length T' is looked for from T / kLargestMistakenFactor to kLargestMistakenFactor T.

// |a - b| relative to the larger of |a| and |b|: 0 when they are equal, infinite when one is not finite.
double relative_difference(double a, double b);

enum class SeriesMistake {
  None,           // no single mistake explains the series
  ReadAhead,      // logged rate of step t = the schedule's of step t + amount (amount < 0: behind, holding step 0's)
  Restarted,      // the schedule started over at each step of `restarts` (row t holds the schedule's of t - restart)
  Faster,         // logged rate of step t = the schedule's of step amount * t
  Slower,         // logged rate of step t = the schedule's of step floor(t / amount)
  OtherLength,    // the rows follow the schedule's spec built for `amount` steps (other_length) instead of T
  LengthChanged,  // the rows follow the spec built for one length up to a row, and for another from the next row on
  Scaled,         // logged rate = amount * the schedule's
  OtherSetting,   // the rows follow the spec with one number written otherwise (`setting`)
};

// OtherSetting: the number, its value in the spec compared ("" where the spec leaves it at its default) and the value
// that makes every row follow, and that spec.
struct OtherSettingFound {
  std::string name;          // "warmup", "floor", "peak", "entry 2 of milestones"
  std::string given, value;  // as written: "100", "10%"
  std::string spec;          // the spec the rows follow
  // The values around `value` that every row fits too, as written (both `value` where the rows pin it);
  // highest_is_last: the span reaches the largest value tried (64 times the spec's).
  std::string lowest, highest;
  bool highest_is_last = false;
};

// LengthChanged: the length the rows up to last_step_before follow, and the one those from first_step_after on
// follow; one of the two is the schedule's own.
struct LengthChange {
  int64_t before = 0, after = 0;
  int64_t last_step_before = 0, first_step_after = 0;
};

// One row compared: the step, the rate logged, the schedule's, and their relative difference.
struct SeriesRow {
  int64_t step = 0;
  double logged = 0.0, scheduled = 0.0, relative = 0.0;
};

struct SeriesMatch {
  size_t compared = 0;        // rows compared
  int64_t schedule_length = 0;  // the schedule's length T (0: it has no end)
  double worst = 0.0;         // the worst relative difference, at row worst_row
  size_t worst_row = 0;
  size_t first_off_row = 0;   // the first row beyond the tolerance; meaningful when !follows
  SeriesRow worst_detail, first_off_detail;  // those two rows
  bool follows = true;        // every row within the tolerance
  SeriesMistake mistake = SeriesMistake::None;
  double amount = 0.0;             // the mistake's number: steps ahead, restarts, the factor or the scale
  std::vector<int64_t> restarts;   // Restarted: the steps at which the schedule started over
  // OtherLength: the length the rows follow, and other_length_last the longest of the lengths next to it that every
  // row fits too (a log of every k-th step may not tell them apart; equal where it does). Faster and Slower: a length
  // whose schedule gives every row the same rate (the rows cannot tell that from the mistake named), both equal;
  // else 0.
  int64_t other_length = 0, other_length_last = 0;
  // OtherLength shorter than the log: the rows before its end follow it, and from this row's step on, past that end,
  // the log does not hold its end value (the scheduler ran past the length it was given); 0 where every row follows.
  int64_t left_end_value_at = 0;
  LengthChange length_change;      // LengthChanged
  OtherSettingFound setting;       // OtherSetting
};

// The series' steps as whole numbers, after the checks match_series makes (and throws for) below.
std::vector<int64_t> series_steps(const std::vector<double>& steps, const std::vector<double>& values);

// Compares values[i], the logged rate of update steps[i] (whole, >= 0), with schedule(steps[i]) (past the schedule's
// end, its end value). Where a row differs by more than `tolerance` (relative), it tries each mistake above and
// reports the first that makes every row match. Another length or setting is tried by rebuilding the schedule from its
// spec (parse_schedule(schedule.to_spec(), T')) for a bounded schedule that tabulates nothing (not refined or table).
// Throws std::invalid_argument for rows it cannot compare (no rows, a step that is not a whole number >= 0, a value
// that is not finite), naming the row (the first is row 1), and for a tolerance that is not a finite number >= 0.
SeriesMatch match_series(const Schedule& schedule, const std::vector<double>& steps, const std::vector<double>& values,
                         double tolerance);
// The same for steps series_steps has already returned (and values it has checked with them).
SeriesMatch match_checked_series(const Schedule& schedule, const std::vector<int64_t>& steps,
                                 const std::vector<double>& values, double tolerance);

// The mistake in words, what the loop did and the usual way a loop comes to do it ("" for None); its name in
// lower_snake_case for JSON and Python (read_ahead, restarted, faster, slower, other_length, length_changed, scaled,
// other_setting, none); steps as "60, 130".
std::string explain(const SeriesMatch& match);
const char* mistake_name(SeriesMistake mistake);
std::string steps_text(const std::vector<int64_t>& steps);

}  // namespace lrkit::schedules
