#include "lrkit/diagnostics/robust.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lrkit::diagnostics {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
}

double median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return kNaN;
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  if (v.size() % 2 == 1) return *mid;
  return (*mid + *std::max_element(v.begin(), mid)) / 2.0;
}

double mad(const std::vector<double>& values, double center) {
  std::vector<double> deviations;
  deviations.reserve(values.size());
  for (double x : values) deviations.push_back(std::fabs(x - center));
  return median(std::move(deviations));
}

double mean_of(const std::vector<double>& values) {
  double sum = 0.0;
  int64_t n = 0;
  for (double x : values)
    if (!std::isnan(x)) {
      sum += x;
      ++n;
    }
  return n > 0 ? sum / static_cast<double>(n) : kNaN;
}

std::vector<double> trailing_robust_z(const std::vector<double>& x, int64_t window, int64_t min_history, double min_scale) {
  std::vector<double> z(x.size(), kNaN);
  for (size_t t = 0; t < x.size(); ++t) {
    const auto begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
    if (static_cast<int64_t>(t - begin) < min_history || std::isnan(x[t])) continue;
    const std::vector<double> history(x.begin() + static_cast<std::ptrdiff_t>(begin), x.begin() + static_cast<std::ptrdiff_t>(t));
    const double center = median(history);
    if (std::isnan(center)) continue;
    const double scale = std::max(1.4826 * mad(history, center), min_scale);
    z[t] = (x[t] - center) / scale;
  }
  return z;
}

double roughness(const std::vector<double>& x, int64_t window) {
  if (x.size() < 3) return kNaN;
  const int64_t half = std::max<int64_t>(1, window / 2);
  std::vector<double> residuals;
  for (size_t t = 0; t < x.size(); ++t) {
    const auto lo = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - half));
    const auto hi = std::min(x.size(), t + static_cast<size_t>(half) + 1);
    const double trend = median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi)));
    residuals.push_back(std::fabs(x[t] - trend));
  }
  const double level = std::fabs(median(x));
  return level > 0 ? median(residuals) / level : kNaN;
}

}  // namespace lrkit::diagnostics
