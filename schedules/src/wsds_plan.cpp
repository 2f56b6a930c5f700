#include "lrkit/schedules/wsds_plan.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace lrkit::schedules {

namespace {
std::string idx(size_t i) { return std::to_string(i + 1); }
constexpr auto Budget = WsdsPlanError::Entry::Budget;
constexpr auto Decay = WsdsPlanError::Entry::Decay;
}  // namespace

std::vector<int64_t> proportional_decays(const std::vector<int64_t>& budgets, double fraction) {
  std::vector<int64_t> decays;
  for (int64_t b : budgets)
    decays.push_back(std::max<int64_t>(1, std::llround(fraction * static_cast<double>(b))));
  return decays;
}

WsdsPlan plan_wsds(const std::vector<int64_t>& budgets, const std::vector<int64_t>& decays) {
  if (budgets.empty()) throw std::invalid_argument("WSD-S needs at least one budget");
  if (decays.size() != budgets.size())
    throw std::invalid_argument("WSD-S has " + std::to_string(budgets.size()) + " budgets but " +
                                std::to_string(decays.size()) + " decay lengths");
  WsdsPlan plan{budgets, decays, {}, {}, 0};
  int64_t cursor = 0;           // position on the single branch
  int64_t previous_start = 0;   // WSD-equivalent step where the previous decay began
  int64_t spent_on_decays = 0;  // sum_{j<i} D_j
  for (size_t i = 0; i < budgets.size(); ++i) {
    const int64_t b = budgets[i], d = decays[i];
    if (b <= 0) throw WsdsPlanError(Budget, i, "WSD-S budget " + idx(i) + " must be positive (got " + std::to_string(b) + ")");
    if (i > 0 && b <= budgets[i - 1])
      throw WsdsPlanError(Budget, i, "WSD-S budgets must increase strictly (budget " + idx(i) + " = " +
                                         std::to_string(b) + " after " + std::to_string(budgets[i - 1]) + ")");
    if (d < 1 || d > b)
      throw WsdsPlanError(Decay, i, "WSD-S decay " + idx(i) + " must be between 1 and its budget " +
                                        std::to_string(b) + " (got " + std::to_string(d) + ")");
    const int64_t start = b - d;
    if (start < previous_start)
      throw WsdsPlanError(Decay, i, "WSD-S decay " + idx(i) + " would start at " + std::to_string(start) +
                                        ", before decay " + std::to_string(i) + " started (" +
                                        std::to_string(previous_start) + "): shorten it or raise budget " + idx(i));
    const int64_t stable = start - previous_start;
    if (stable > 0) plan.segments.push_back({cursor, cursor + stable, false});
    cursor += stable;
    plan.segments.push_back({cursor, cursor + d, true});
    cursor += d;
    plan.checkpoints.push_back(b + spent_on_decays);
    spent_on_decays += d;
    previous_start = start;
  }
  plan.total = cursor;
  return plan;
}

}  // namespace lrkit::schedules
