// Where a schedule's rate at one step, as a function of one of its settings x (its length, its warmup, its floor),
// comes to a logged rate, and the helpers that the searches for such a setting share (match_series' lengths and
// settings, fit_checked_series): a rate against the logged one, the first row a schedule does not give, numbers to
// a number of significant digits, the plainest number in a span.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules::detail {

// `rate` against a logged `value`: +1 above it, -1 below, 0 within the tolerance (relative); nullopt for no rate (a
// schedule that cannot be built with the value tried). What values_crossing's side(x) gives.
inline std::optional<int> side_of(std::optional<double> rate, double value, double tolerance) {
  if (!rate) return std::nullopt;
  if (relative_difference(*rate, value) <= tolerance) return 0;
  return *rate > value ? 1 : -1;
}

// The first row from `row` on whose value is not within `tolerance` of schedule(step); steps.size() if none.
inline size_t first_row_off(const Schedule& schedule, const std::vector<int64_t>& steps,
                            const std::vector<double>& values, double tolerance, size_t row = 0) {
  while (row < steps.size() && relative_difference(values[row], schedule(steps[row])) <= tolerance) ++row;
  return row;
}

// `x` to `digits` significant digits.
inline double rounded(double x, int digits) {
  char text[40];
  std::snprintf(text, sizeof text, "%.*g", digits, x);
  return std::strtod(text, nullptr);
}

// The number with the fewest significant digits in [first, last] (0 < first <= last), the lowest of those, or
// `fallback` where rounding finds none: a setting's plainest value in the span its rows allow, a peak of 0.0005
// between a decay's first logged rate 0.000499 and the warmup's line at that row.
inline double plainest_between(double first, double last, double fallback) {
  for (int digits = 1; digits <= 17; ++digits) {
    const double unit = std::pow(10.0, std::floor(std::log10(last)) - digits + 1);
    const double x = rounded(std::ceil(first / unit) * unit, digits);
    if (x >= first && x <= last) return x;
  }
  return fallback;
}

// Grid points per doubling of x: the rate is looked at every 2^(1/8) (9 %) of x.
inline constexpr int kGridPointsPerDoubling = 8;

// The values of x in [low, high] (0 < low <= high) at which side(x) is 0. side(x) is +1 where the rate at x lies above
// the logged rate, -1 below, 0 within the tolerance, nullopt where the schedule cannot be built with x. They are
// looked for on a geometric grid from low to high, and between two neighbouring grid points by halving the span
// between them (to two whole numbers where `whole`, else at most 64 times): where side changes sign, the x at which
// it is 0; where side becomes 0 or stops being 0, the last x at which it is 0 (a rate that is flat in x, such as the
// rate of a step before a decay that x moves, is the logged one up to a boundary, and the setting is usually that
// boundary). At most `most` values, in the order found.
template <class Side>
std::vector<double> values_crossing(Side side, double low, double high, bool whole, size_t most) {
  std::vector<double> found;
  const auto add = [&](double x) {
    if (found.size() < most && std::find(found.begin(), found.end(), x) == found.end()) found.push_back(x);
  };
  // Halves [a, b], where side(a) is `side_a` and side(b) differs, to the x next to the change on a's side, or to an x
  // at which side is 0 when neither end is 0. Returns that x, or nullopt where there is none (a crossing whose span
  // holds an x the schedule cannot take).
  const auto halve = [&](double a, int side_a, double b) -> std::optional<double> {
    for (int halvings = 0; halvings < 64 && (!whole || std::fabs(b - a) > 1.0); ++halvings) {
      double middle = a + (b - a) / 2.0;
      if (whole) middle = a < b ? std::floor(middle) : std::ceil(middle);
      if (middle == a || middle == b) break;
      const auto middle_side = side(middle);
      if (!middle_side && side_a != 0) return std::nullopt;
      if (side_a != 0 && *middle_side == 0) return middle;  // a crossing: any x at which side is 0
      (middle_side == side_a ? a : b) = middle;  // from a flat run, an x the schedule cannot take ends it too
    }
    if (side_a == 0) return a;
    return side(b) == 0 ? std::optional<double>(b) : std::nullopt;
  };
  double before = 0.0;
  std::optional<int> before_side;
  bool first = true;
  for (int k = 0;; ++k) {
    double x = std::min(high, low * std::exp2(static_cast<double>(k) / kGridPointsPerDoubling));
    if (whole) x = std::round(x);
    if (!first && x == before) continue;
    const auto here = side(x);
    if (here && before_side && *here != *before_side) {
      if (*before_side == 0) {
        add(before);  // the last grid point of a flat run, then its end
        if (const auto end = halve(before, 0, x)) add(*end);
      } else if (*here == 0) {
        if (const auto start = halve(x, 0, before)) add(*start);  // a flat run's start
      } else if (const auto crossing = halve(before, *before_side, x)) {
        add(*crossing);
      }
    }
    if (here == 0 && before_side != 0) add(x);  // the first grid point of a flat run
    before = x;
    before_side = here;
    first = false;
    if (x >= high) {
      if (here == 0) add(x);
      break;
    }
  }
  return found;
}

}  // namespace lrkit::schedules::detail
