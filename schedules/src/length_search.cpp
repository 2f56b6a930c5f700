#include "length_search.hpp"

#include <algorithm>

#include "crossing_search.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules::detail {

namespace {

// Lengths up to 1e15 steps, as the logged steps are.
constexpr int64_t kLongestLength = 1'000'000'000'000'000;

}  // namespace

bool rebuildable_from_spec(const Schedule& schedule) {
  const auto phases = schedule.phases();
  return schedule.bounded() &&
         std::none_of(phases.begin(), phases.end(), [](const Phase& p) { return p.kind == PhaseKind::Table; });
}

LengthSearch::LengthSearch(const Schedule& schedule, double tolerance)
    : tolerance_(tolerance),
      possible_(rebuildable_from_spec(schedule)),
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
  // The rate at `step` under length L against `value` (see values_crossing).
  const auto side = [&](double length) {
    const Schedule* s = built_for(static_cast<int64_t>(length));
    return side_of(s ? std::optional<double>((*s)(step)) : std::nullopt, value, tolerance_);
  };
  const int64_t shortest = std::max<int64_t>(1, total_ / kLargestMistakenFactor);
  const int64_t longest =
      total_ > kLongestLength / kLargestMistakenFactor ? kLongestLength : total_ * kLargestMistakenFactor;
  for (const double length : values_crossing(side, static_cast<double>(shortest), static_cast<double>(longest),
                                             true, kMostLengthsPerRow + 1))
    if (static_cast<int64_t>(length) != total_ && lengths.size() < kMostLengthsPerRow)
      lengths.push_back(static_cast<int64_t>(length));
  return lengths;
}

}  // namespace lrkit::schedules::detail
