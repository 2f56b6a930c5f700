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

namespace {

// The median of a sorted run of values, as median() takes it.
double sorted_median(const std::vector<double>& v) {
  const size_t n = v.size(), mid = n / 2;
  return n % 2 == 1 ? v[mid] : (v[mid] + v[mid - 1]) / 2.0;
}

// mad(v, center) for sorted v: the deviations |v_i - center| come in ascending order by walking outward from
// center, so the middle one is found without copying or partitioning them.
double sorted_mad(const std::vector<double>& v, double center) {
  const size_t n = v.size(), wanted = n / 2;  // the 0-based rank of the middle deviation
  size_t right = static_cast<size_t>(std::lower_bound(v.begin(), v.end(), center) - v.begin()), left = right;
  double previous = 0.0, current = 0.0;
  for (size_t rank = 0; rank <= wanted; ++rank) {
    previous = current;
    const bool take_left = left > 0 && (right == n || center - v[left - 1] <= v[right] - center);
    current = take_left ? std::fabs(v[--left] - center) : std::fabs(v[right++] - center);
  }
  return n % 2 == 1 ? current : (current + previous) / 2.0;
}

}  // namespace

// The trailing window's non-NaN values are kept sorted as it slides (one insert and one erase a step), so each
// step costs a binary search and a short walk where copying and partitioning the window cost ten times more: a
// 180,000-step log of 8 ranks took 10 s at a 500-step window.
std::vector<double> trailing_robust_z(const std::vector<double>& x, int64_t window, int64_t min_history, double min_scale) {
  std::vector<double> z(x.size(), kNaN), sorted;
  size_t begin = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    const auto wanted_begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
    for (; begin < wanted_begin; ++begin)
      if (!std::isnan(x[begin])) sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), x[begin]));
    if (t > 0 && !std::isnan(x[t - 1])) sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), x[t - 1]), x[t - 1]);
    if (static_cast<int64_t>(t - begin) < min_history || std::isnan(x[t]) || sorted.empty()) continue;
    const double center = sorted_median(sorted);
    const double scale = std::max(1.4826 * sorted_mad(sorted, center), min_scale);
    z[t] = (x[t] - center) / scale;
  }
  return z;
}

double roughness(const std::vector<double>& x, int64_t window) {
  if (x.size() < 3) return kNaN;
  const int64_t half = std::max<int64_t>(1, window / 2);
  std::vector<double> residuals, sorted;  // the centered window's non-NaN values, kept sorted as it slides
  size_t in = 0, out = 0;                  // x[out, in) is in `sorted`
  for (size_t t = 0; t < x.size(); ++t) {
    const auto lo = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - half));
    const auto hi = std::min(x.size(), t + static_cast<size_t>(half) + 1);
    for (; in < hi; ++in)
      if (!std::isnan(x[in])) sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), x[in]), x[in]);
    for (; out < lo; ++out)
      if (!std::isnan(x[out])) sorted.erase(std::lower_bound(sorted.begin(), sorted.end(), x[out]));
    residuals.push_back(std::fabs(x[t] - (sorted.empty() ? kNaN : sorted_median(sorted))));
  }
  const double level = std::fabs(median(x));
  return level > 0 ? median(residuals) / level : kNaN;
}

}  // namespace lrkit::diagnostics
