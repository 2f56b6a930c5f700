// Schedules refined from an earlier run's gradient norms (Defazio et al. 2023,
// arXiv 2310.07831; ALGORITHMS.md section 4): resample to T, median-smooth,
// weight w_t = G_t^-2 (l2) or G_t^-1 (l1), eta_t = w_t * sum_{p>t} w_p,
// normalized to max 1. O(T log T) overall: suffix sums plus a sliding median.
#pragma once

#include <cstdint>
#include <vector>

namespace lrkit::schedules {

enum class NormKind { L2, L1 };

// Median of every window of odd `width` centred on each index; beyond either
// end the nearest value repeats. O(n log n) whatever the width.
std::vector<double> sliding_median(const std::vector<double>& values, int64_t width);

// Linear interpolation of `values` onto `count` evenly spaced points spanning
// the same range (count >= 1).
std::vector<double> resample_linear(const std::vector<double>& values, int64_t count);

// The longest refined schedule: its T + 1 multipliers are a table in memory.
inline constexpr int64_t kMostRefinedSteps = 100'000'000;

// The refined multipliers for updates t = 0..T (T + 1 values, the last 0),
// max 1. Norms must be finite and positive; `tau` in [0, 1] sets the median
// width 2 floor(tau T / 2) + 1; T at most kMostRefinedSteps. Throws
// std::invalid_argument naming the first bad norm's index.
std::vector<double> refine_from_norms(const std::vector<double>& norms, int64_t total, NormKind kind,
                                      double tau = 0.1);

}  // namespace lrkit::schedules
