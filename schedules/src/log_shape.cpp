#include "log_shape.hpp"

#include <algorithm>
#include <cmath>

#include "crossing_search.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules::detail {

namespace {

bool same_rate(double a, double b, double tolerance) { return relative_difference(a, b) <= tolerance; }

// Whether every row before the peak row follows `ramp` (the share of the way from the start to the peak at a share of
// the warmup) over a warmup of `length` steps.
template <class Ramp>
bool warmup_rows_follow(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
                        const LogShape& shape, int64_t length, Ramp ramp) {
  for (size_t row = 0; row < shape.peak_row; ++row) {
    const double share = ramp(static_cast<double>(steps[row]) / static_cast<double>(length));
    if (!same_rate(values[row], shape.warmup_init + (shape.largest - shape.warmup_init) * share, tolerance))
      return false;
  }
  return true;
}

// A cosine or 1-sqrt warmup where the rows follow one of them up to the first row at the peak, and not the line read.
void read_warmup_shape(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
                       LogShape& shape) {
  if (shape.peak_row < 2 || steps[0] < 0 ||
      warmup_rows_follow(steps, values, tolerance, shape, shape.warmup, [](double p) { return p; }))
    return;
  const int64_t length = steps[shape.peak_row];
  if (warmup_rows_follow(steps, values, tolerance, shape, length,
                         [](double p) { return 0.5 * (1.0 - std::cos(kPi * p)); })) {
    shape.warmup_shape = "cosine";
  } else if (warmup_rows_follow(steps, values, tolerance, shape, length,
                                [](double p) { return 1.0 - std::sqrt(1.0 - p); })) {
    shape.warmup_shape = "1-sqrt";
  } else {
    return;
  }
  shape.warmup = length;
}

// The warmup's start and the step it reaches the peak at, from the rows before the peak row.
void read_warmup(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
                 LogShape& shape) {
  const size_t peak_row = shape.peak_row;
  if (peak_row == 0) return;
  const double largest = shape.largest;
  double init = 0.0;
  if (steps[0] == 0) {
    init = values[0] > 0 ? plainest_near(values[0], tolerance / 4) : 0.0;
  } else if (values[peak_row - 1] > 0) {
    // The line through the warmup's last two rows (the last and the peak row where it is the only one), unless one
    // from 0 through the last gives the other as well (or, from the only one, reaches the peak at a whole step).
    const size_t i = peak_row - 1, j = peak_row >= 2 ? peak_row - 2 : peak_row;
    const double slope = (values[i] - values[j]) / static_cast<double>(steps[i] - steps[j]);
    const double start = values[i] - slope * static_cast<double>(steps[i]);
    bool from_zero = false;
    if (j < i) {
      from_zero = same_rate(values[i] * static_cast<double>(steps[j]) / static_cast<double>(steps[i]), values[j],
                            tolerance);
    } else {
      const double reached = static_cast<double>(steps[i]) * largest / values[i];
      from_zero = same_rate(reached, std::round(reached), tolerance);
    }
    if (!from_zero && start > 0 && start < largest)
      init = plainest_near(start, tolerance / 4 * largest / start);
  }
  shape.warmup_init = init;
  shape.warmup = steps[peak_row];
  // Where a row before the peak row lies above the start, the line from the start through it reaches the peak at
  // `reached`: a log of every k-th step misses the warmup's end.
  for (size_t i = peak_row; i-- > 0;) {
    if (steps[i] > 0 && values[i] > init && !same_rate(values[i], init, tolerance)) {
      const double slope = (values[i] - init) / static_cast<double>(steps[i]);
      const double reached = (largest - init) / slope;
      shape.warmup = std::min(steps[peak_row], static_cast<int64_t>(std::llround(reached)));
      // Where the line passes above the peak row, the warmup ended between the rows and a decay followed at once: the
      // peak, never logged, lies between the largest rate and the line there. The plainest number in between is read
      // as it where its step on the line is a whole one between the two rows (a Trainer's logging_steps of 50 and a
      // warmup_ratio that gives 469 warmup steps).
      const double on_line = init + slope * static_cast<double>(steps[peak_row]);
      if (same_rate(on_line, largest, tolerance) || on_line < largest) break;
      const double peak = plainest_between(largest, on_line, largest);
      const double end = (peak - init) / slope;
      if (same_rate(end, std::round(end), tolerance) && std::round(end) > static_cast<double>(steps[i])) {
        shape.peak = peak;
        shape.warmup = static_cast<int64_t>(std::round(end));
      }
      break;
    }
  }
  read_warmup_shape(steps, values, tolerance, shape);
}

// The levels after the peak row, where it leaves the peak, and where the log climbs again.
void read_after_peak(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
                     LogShape& shape) {
  double level = shape.largest;
  bool rising = false, levels_end = false;
  for (size_t row = shape.peak_row + 1; row < values.size(); ++row) {
    const RowChange change{steps[row - 1], steps[row], values[row], row};
    if (!levels_end && !same_rate(values[row], level, tolerance)) {
      if (!shape.leaves_peak) shape.leaves_peak = change;
      if (shape.levels.size() == kMostLevels) {
        shape.levels.clear();
        levels_end = true;
      } else {
        shape.levels.push_back(change);
        level = values[row];
      }
    }
    const bool rises = values[row] > values[row - 1] && !same_rate(values[row], values[row - 1], tolerance);
    if (rises && !rising) {
      if (shape.climbs.size() < 2) shape.climbs.push_back(change);
      ++shape.climb_count;
    }
    rising = rises;
    if (shape.climb_count == 1) shape.second_top = std::max(shape.second_top, values[row]);
  }
}

void read_hold(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
               LogShape& shape) {
  const double end = values.back();
  size_t row = values.size() - 1;
  while (row > shape.peak_row + 1 && same_rate(values[row - 1], end, tolerance)) --row;
  if (row + 1 < values.size() && row > shape.peak_row && !same_rate(end, shape.largest, tolerance))
    shape.hold = RowChange{steps[row - 1], steps[row], end, row};
}

}  // namespace

double plainest_near(double x, double tolerance) {
  for (int digits = 1; digits <= 17; ++digits)
    if (const double r = rounded(x, digits); relative_difference(r, x) <= tolerance) return r;
  return x;
}

int64_t plainest_whole(int64_t low, int64_t high) {
  if (low > high) return high;
  for (int64_t power = 1'000'000'000'000'000'000; power > 1; power /= 10) {
    const int64_t multiple = high / power * power;
    if (multiple >= low && multiple >= 1) return multiple;
  }
  return high;
}

LogShape read_log_shape(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance) {
  LogShape shape;
  shape.largest = *std::max_element(values.begin(), values.end());
  shape.peak = plainest_near(shape.largest, tolerance / 4);
  while (!same_rate(values[shape.peak_row], shape.largest, tolerance)) ++shape.peak_row;
  read_warmup(steps, values, tolerance, shape);
  read_after_peak(steps, values, tolerance, shape);
  read_hold(steps, values, tolerance, shape);
  return shape;
}

}  // namespace lrkit::schedules::detail
