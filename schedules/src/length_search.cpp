#include "length_search.hpp"

#include <algorithm>
#include <cmath>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules::detail {

namespace {

// Lengths up to 1e15 steps, as the logged steps are.
constexpr int64_t kLongestLength = 1'000'000'000'000'000;
// Grid points per doubling of the length: the rate at a step is looked at every 2^(1/8) (9 %) of the length.
constexpr int kGridPointsPerDoubling = 8;

bool tabulates(const Schedule& schedule) {
  const auto phases = schedule.phases();
  return std::any_of(phases.begin(), phases.end(), [](const Phase& p) { return p.kind == PhaseKind::Table; });
}

}  // namespace

LengthSearch::LengthSearch(const Schedule& schedule, double tolerance)
    : tolerance_(tolerance),
      possible_(schedule.bounded() && !tabulates(schedule)),
      spec_(schedule.to_spec()),
      total_(schedule.total()) {}

const Schedule* LengthSearch::built_for(int64_t total) {
  auto [at, inserted] = built_.try_emplace(total);
  if (inserted) {
    try {
      at->second = parse_schedule(spec_, total);
    } catch (const SpecError&) {  // a length the spec cannot take
    }
  }
  return at->second ? &*at->second : nullptr;
}

std::vector<int64_t> LengthSearch::lengths_giving(int64_t step, double value) {
  std::vector<int64_t> lengths;
  if (!possible_) return lengths;
  // The rate at `step` under length L, against `value`: +1 above it, -1 below, 0 within the tolerance; nullopt where
  // the spec cannot be built for L.
  const auto side = [&](int64_t length) -> std::optional<int> {
    const Schedule* s = built_for(length);
    if (!s) return std::nullopt;
    const double rate = (*s)(step);
    if (relative_difference(rate, value) <= tolerance_) return 0;
    return rate > value ? 1 : -1;
  };
  const auto add = [&](int64_t length) {
    if (length != total_ && lengths.size() < kMostLengthsPerRow &&
        std::find(lengths.begin(), lengths.end(), length) == lengths.end())
      lengths.push_back(length);
  };
  const int64_t shortest = std::max<int64_t>(1, total_ / kLargestMistakenFactor);
  const int64_t longest =
      total_ > kLongestLength / kLargestMistakenFactor ? kLongestLength : total_ * kLargestMistakenFactor;
  int64_t before = 0;  // the grid point before, and the side its rate lies on
  std::optional<int> before_side;
  for (int k = 0;; ++k) {
    const double point = static_cast<double>(shortest) * std::exp2(static_cast<double>(k) / kGridPointsPerDoubling);
    const int64_t length = point >= static_cast<double>(longest) ? longest : std::llround(point);
    if (length == before) continue;
    const auto here = side(length);
    if (here == 0) {
      add(length);
    } else if (here && before_side && *before_side != 0 && *here != *before_side) {
      // The rate crosses `value` between the two points: halve the span to the two whole lengths around it.
      int64_t low = before, high = length;
      while (high - low > 1) {
        const int64_t middle = low + (high - low) / 2;
        const auto middle_side = side(middle);
        if (!middle_side) break;
        if (*middle_side == 0) {
          add(middle);
          break;
        }
        (*middle_side == *before_side ? low : high) = middle;
      }
      if (high - low == 1) {
        if (side(low) == 0) add(low);
        if (side(high) == 0) add(high);
      }
    }
    before = length;
    before_side = here;
    if (length == longest) break;
  }
  return lengths;
}

}  // namespace lrkit::schedules::detail
