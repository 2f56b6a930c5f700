// The WSD-S segment plan (Wen et al. 2024, ALGORITHMS.md section 2): one main
// branch that decays for each budget, then jumps straight back to the peak.
// Checkpoint i lands at C_i = B_i + sum_{j<i} D_j; the total is
// B_k + sum_{j<k} D_j, the compute of WSD with k branches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::schedules {

struct WsdsSegment {
  int64_t begin = 0;
  int64_t end = 0;
  bool decay = false;
};

struct WsdsPlan {
  std::vector<int64_t> budgets;      // B_i, WSD-equivalent steps
  std::vector<int64_t> decays;       // D_i
  std::vector<WsdsSegment> segments;  // stable, decay, stable, decay, ...
  std::vector<int64_t> checkpoints;  // C_i: steps after which checkpoint i is saved
  int64_t total = 0;
};

// The entry a WSD-S plan refuses: budget `index` or decay `index` (0-based), so
// that a spec error can point at the list entry that caused it.
struct WsdsPlanError : std::invalid_argument {
  enum class Entry { Budget, Decay };
  WsdsPlanError(Entry which, size_t position, const std::string& message)
      : std::invalid_argument(message), entry(which), index(position) {}
  Entry entry;
  size_t index;
};

// Throws WsdsPlanError naming the offending budget or decay when budgets are not
// strictly increasing and positive, a decay is not in [1, B_i], or a decay
// would start before the previous one did (and std::invalid_argument when the
// two lists are empty or of different lengths).
WsdsPlan plan_wsds(const std::vector<int64_t>& budgets, const std::vector<int64_t>& decays);

// D_i = round(fraction * B_i), at least 1 step.
std::vector<int64_t> proportional_decays(const std::vector<int64_t>& budgets, double fraction);

}  // namespace lrkit::schedules
