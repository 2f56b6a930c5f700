// Where a schedule's rate at one step, as a function of one of its settings x (its length, its warmup, its floor),
// comes to a logged rate: what match_series uses to find the setting a loop's scheduler was given.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <vector>

namespace lrkit::schedules::detail {

// Grid points per doubling of x: the rate is looked at every 2^(1/8) (9 %) of x.
inline constexpr int kGridPointsPerDoubling = 8;

// The values of x in [low, high] (0 < low <= high) at which side(x) is 0, found on a geometric grid from low to high,
// and between two grid points at which side(x) has opposite signs by halving the span between them: to two whole
// numbers where `whole`, else until side is 0 (at most 64 halvings). side(x) is +1 where the rate at x lies above the
// logged rate, -1 below, 0 within the tolerance, nullopt where the schedule cannot be built with x. At most `most`
// values, in the order found; rates that are flat in x (within the tolerance) give each grid point of the flat.
template <class Side>
std::vector<double> values_crossing(Side side, double low, double high, bool whole, size_t most) {
  std::vector<double> found;
  const auto add = [&](double x) {
    if (found.size() < most && std::find(found.begin(), found.end(), x) == found.end()) found.push_back(x);
  };
  double before = 0.0;
  std::optional<int> before_side;
  bool first = true;
  for (int k = 0;; ++k) {
    double x = std::min(high, low * std::exp2(static_cast<double>(k) / kGridPointsPerDoubling));
    if (whole) x = std::round(x);
    if (!first && x == before) continue;
    const auto here = side(x);
    if (here == 0) {
      add(x);
    } else if (here && before_side && *before_side != 0 && *here != *before_side) {
      double below = before, above = x;  // side(below) is before_side, side(above) is here
      for (int halvings = 0; halvings < 64 && (!whole || above - below > 1.0); ++halvings) {
        double middle = below + (above - below) / 2.0;
        if (whole) middle = std::floor(middle);
        if (middle == below || middle == above) break;
        const auto middle_side = side(middle);
        if (!middle_side) break;
        if (*middle_side == 0) {
          add(middle);
          break;
        }
        (*middle_side == *before_side ? below : above) = middle;
      }
      if (whole && above - below == 1.0) {
        if (side(below) == 0) add(below);
        if (side(above) == 0) add(above);
      }
    }
    before = x;
    before_side = here;
    first = false;
    if (x >= high) break;
  }
  return found;
}

}  // namespace lrkit::schedules::detail
