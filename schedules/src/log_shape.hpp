// What the shape of a logged series of rates tells of the schedule that gave it, read before any family is tried
// (fit_checked_series): its peak and warmup, where it leaves the peak, the levels a step schedule drops to, where it
// climbs again (a restart, a cycle), and where it ends holding one rate (a decay that ended before the run did).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lrkit::schedules::detail {

// A change of the rate between two consecutive rows: it happened after step `after` and by step `at` (the next row),
// where the rate is `rate`. In a log of every step, at = after + 1.
struct RowChange {
  int64_t after = 0, at = 0;
  double rate = 0.0;
  size_t row = 0;  // the row at `at`
};

// Levels past this many are no step schedule's: a smooth decay changes level at every row.
inline constexpr size_t kMostLevels = 64;

struct LogShape {
  double largest = 0.0;  // the largest rate logged
  // That rate, with the fewest significant digits within a quarter of the tolerance; or, where the warmup ended between
  // two rows and a decay followed at once, the peak the warmup's line reaches between them (read_warmup).
  double peak = 0.0;
  size_t peak_row = 0;   // the first row at the largest rate
  // A linear warmup from `warmup_init` that reaches the peak at step `warmup` (0: none). The start is the rate of
  // step 0 where the log holds it, else where the line through the warmup's last two rows meets step 0 (0 where that
  // is within the tolerance of 0).
  int64_t warmup = 0;
  double warmup_init = 0.0;
  // "cosine" or "1-sqrt" where the warmup rows follow that ramp from the start to the first row at the peak and not
  // the line (Hugging Face's warmup_type); "linear" otherwise.
  std::string warmup_shape = "linear";
  std::optional<RowChange> leaves_peak;  // the first row after the peak row off the peak
  // Each row after the peak row whose rate leaves the level of the row before it (a step schedule's drops), up to
  // kMostLevels; empty where there are more (the rate changes smoothly).
  std::vector<RowChange> levels;
  // After the peak, the rows where the rate starts to rise again (a restart, a cycle's trough passed): the first two,
  // how many there are, and the largest rate from the first to the second (the second cycle's top).
  std::vector<RowChange> climbs;
  size_t climb_count = 0;
  double second_top = 0.0;
  // Where the log ends holding one rate below the peak, two rows or more, after the peak row: from row `row`.
  std::optional<RowChange> hold;
};

LogShape read_log_shape(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance);

// `x` with the fewest significant digits within `tolerance` (relative) of it: a float32 log's 0.000500000024 is
// 0.0005 at a tolerance of 2.5e-7.
double plainest_near(double x, double tolerance);

// The whole number in [low, high] with the most trailing zeros, the highest among equals (low <= high): the
// milestone 100 of a drop seen somewhere from step 99 to 105. `high` where low > high.
int64_t plainest_whole(int64_t low, int64_t high);

}  // namespace lrkit::schedules::detail
