// Schedules refined from an earlier run's gradient norms (Defazio et al. 2023,
// arXiv 2310.07831; ALGORITHMS.md section 4): resample to T, median-smooth,
// weight w_t = G_t^-2 (l2) or G_t^-1 (l1), eta_t = w_t * sum_{p>t} w_p,
// normalized to max 1. O(T log T) overall: suffix sums plus a sliding median.
#pragma once

#include <cstddef>
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

// A non-finite norm measured nothing: it is an update that was skipped
// (train.nonfinite=skip; a GradScaler's overflow, recorded after unscale_) or
// the last step of a run that diverged. Each is replaced by the linear
// interpolation of the nearest finite norms before and after it (the nearest
// one beyond the first or the last). Returns how many were replaced; throws
// std::invalid_argument where no norm is finite.
size_t fill_nonfinite_norms(std::vector<double>& norms);

// The refined multipliers for updates t = 0..T (T + 1 values, the last 0),
// max 1. Non-finite norms are filled first (fill_nonfinite_norms); the others
// must be > 0. `tau` in [0, 1] sets the median width 2 floor(tau T / 2) + 1;
// T at most kMostRefinedSteps. Throws std::invalid_argument naming the first
// bad norm's index.
std::vector<double> refine_from_norms(std::vector<double> norms, int64_t total, NormKind kind, double tau = 0.1);

}  // namespace lrkit::schedules
