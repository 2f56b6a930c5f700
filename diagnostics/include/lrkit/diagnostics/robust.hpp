// Robust statistics for run-log analysis: medians, MAD and trailing-window
// robust z-scores (z = (x - median) / (1.4826 MAD)), which a few spikes in
// the window cannot drag along the way a mean and a standard deviation can.
#pragma once

#include <cstdint>
#include <vector>

namespace lrkit::diagnostics {

double median(std::vector<double> values);  // NaNs ignored; NaN when none is left
double mad(const std::vector<double>& values, double center);  // median absolute deviation
double mean_of(const std::vector<double>& values);  // NaNs ignored; NaN when none is left

// z_t of x_t against the `window` values before it; NaN for the first
// min_history steps and where the input is NaN. The scale is at least
// `min_scale`, so float noise on a flat series is not an anomaly.
std::vector<double> trailing_robust_z(const std::vector<double>& x, int64_t window, int64_t min_history, double min_scale);

// z of a lasting shift at t: the median of x[t, t + horizon) against the
// median of the `window` values before t, over the standard error of their
// difference when nothing changed: 1.2533 scale sqrt(1/n_after + 1/n_before)
// (a median's with normal noise; scale = max(1.4826 MAD of the values before,
// min_scale)). A change that lasts scores highest at its first step, where the
// values after are all changed and those before are not. NaN for the first
// min_history steps, for the last horizon - 1, and where NaN is over half of
// either side.
std::vector<double> shift_z(const std::vector<double>& x, int64_t window, int64_t horizon, int64_t min_history,
                            double min_scale);

// Median of |x_t - centered rolling median of width `window`| over the median of x:
// the typical relative step-to-step wiggle of a curve after its trend is removed.
double roughness(const std::vector<double>& x, int64_t window);

}  // namespace lrkit::diagnostics
