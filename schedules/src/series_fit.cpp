#include "lrkit/schedules/series_fit.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "crossing_search.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {

namespace {

// `x` with the fewest significant digits within a quarter of the tolerance of it (a float32 log's 0.000500000024
// is 0.0005), so that the spec reads as it was written and its rates stay within the tolerance.
double plainest_near(double x, double tolerance) {
  for (int digits = 1; digits <= 17; ++digits)
    if (const double r = detail::rounded(x, digits); relative_difference(r, x) <= tolerance / 4) return r;
  return x;
}

// The first row at `peak` (within the tolerance); values.size() if none.
size_t first_row_at(const std::vector<double>& values, double peak, double tolerance) {
  size_t row = 0;
  while (row < values.size() && relative_difference(values[row], peak) > tolerance) ++row;
  return row;
}

// The step a linear warmup from 0 reaches `peak` at: the first row at the peak, `peak_row`, or, where a row before it
// has a rate above 0, the step that row's slope puts the peak at (a log of every k-th step misses the warmup's end).
// 0 where the first row is at the peak.
int64_t warmup_of(const std::vector<int64_t>& steps, const std::vector<double>& values, double peak,
                  size_t peak_row) {
  if (peak_row == 0 || peak_row == values.size()) return 0;
  for (size_t i = peak_row; i-- > 0;) {
    if (values[i] > 0) {
      const double reached = static_cast<double>(steps[i]) * peak / values[i];
      return std::min(steps[peak_row], static_cast<int64_t>(std::llround(reached)));
    }
  }
  return steps[peak_row];
}

// The first row after the peak's (from `peak_row` on) below it, as (step, rate), in a log whose rate holds at the
// peak up to it: where a step schedule drops first.
std::optional<std::pair<int64_t, double>> first_drop(const std::vector<int64_t>& steps,
                                                     const std::vector<double>& values, double peak,
                                                     double tolerance, size_t peak_row) {
  size_t row = peak_row;
  while (row < values.size() && relative_difference(values[row], peak) <= tolerance) ++row;
  if (row == 0 || row == values.size() || !(values[row] > 0)) return std::nullopt;
  return std::make_pair(steps[row], values[row]);
}

}  // namespace

SeriesFit fit_checked_series(const std::vector<int64_t>& steps, const std::vector<double>& values,
                             std::optional<int64_t> total, double tolerance) {
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("tolerance must be a finite number >= 0 (got " + format_number(tolerance) + ")");
  if (total && *total < 1) throw std::invalid_argument("total must be at least 1 (got " + std::to_string(*total) + ")");
  double largest = values.front();
  for (const double v : values) largest = std::max(largest, v);
  const double peak = plainest_near(largest, tolerance);
  const size_t peak_row = first_row_at(values, largest, tolerance);
  const int64_t warmup = warmup_of(steps, values, largest, peak_row);
  // Without a length given, the run's is the last step + 1, or the last step where the log holds the end value's row
  // (a Trainer logs the step max_steps).
  std::vector<int64_t> lengths = {total ? *total : steps.back() + 1};
  if (!total && steps.back() >= 1) lengths.push_back(steps.back());
  const std::string p = "peak=" + format_number(peak), w = warmup > 0 ? ", warmup=" + std::to_string(warmup) : "";
  std::vector<std::string> candidates = {
      "constant(" + p + w + ")",
      "cosine(" + p + w + ")",
      "linear(" + p + w + ")",
      "wsd(" + p + w + ", decay=20%, shape=1-sqrt)",
      "wsd(" + p + w + ", decay=20%, shape=linear)",
      "wsd(" + p + w + ", decay=20%, shape=cosine)",
      "polynomial(" + p + w + ", power=2)",
      "invsqrt(" + p + w + ")",
      "exponential(" + p + w + ", gamma=0.99)",
      "onecycle(" + p + ")",
  };
  // A step schedule: its first drop after the warmup gives the steps between drops and the factor, where there is one.
  if (const auto drop = first_drop(steps, values, largest, tolerance, peak_row))
    candidates.push_back("step(" + p + w + ", every=" + std::to_string(drop->first - warmup) +
                         ", gamma=" + format_number(plainest_near(drop->second / largest, tolerance)) + ")");
  SeriesFit closest;
  bool tried = false;
  for (const std::string& candidate : candidates) {
    // The family's fit at each length; where both lengths fit (a linear decay to F over T steps is, at whole steps,
    // one to another floor over T + 1), the plainer spec, the longer length among equals.
    std::optional<SeriesFit> best;
    for (const int64_t length : lengths) {
      std::optional<Schedule> schedule;
      try {
        schedule = parse_schedule(candidate, length);
      } catch (const SpecError&) {  // a warmup as long as the run, a family that cannot take this length
        continue;
      }
      const SeriesMatch match = match_checked_series(*schedule, steps, values, tolerance);
      // The spec and length the rows follow, where the candidate or one number or the length of it does.
      std::optional<std::pair<std::string, int64_t>> fitted;
      if (match.follows) {
        fitted = {schedule->to_spec(), length};
      } else if (match.mistake == SeriesMistake::OtherSetting) {
        fitted = {match.setting.spec, length};
      } else if ((match.mistake == SeriesMistake::OtherLength && match.left_end_value_at == 0) ||
                 ((match.mistake == SeriesMistake::Faster || match.mistake == SeriesMistake::Slower) &&
                  match.other_length > 0)) {
        fitted = {schedule->to_spec(), match.other_length};
      }
      if (fitted) {
        const Schedule fit = parse_schedule(fitted->first, fitted->second);
        if (!best || fit.to_spec().size() < best->spec.size())
          best = SeriesFit{true, fit.to_spec(), fitted->second, match_checked_series(fit, steps, values, tolerance)};
      } else if (!tried || match.worst < closest.match.worst) {
        closest = {false, schedule->to_spec(), length, match};
        tried = true;
      }
    }
    if (best) return *best;
  }
  return closest;
}

}  // namespace lrkit::schedules
