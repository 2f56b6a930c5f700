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

// mad(v, center) for sorted v. The deviations |v_i - center| form two ascending runs, the values below center read
// nearest first and those at or above it likewise: the middle one is the k-th smallest of two sorted runs, found
// by a binary search over how many of it come from the first run (log n, where walking outward from center took n/2
// steps and was the report's largest cost at a 500-step window). A center that is not finite (infinite values in
// most of the window) makes deviations NaN, which order nothing: there the walk gives mad()'s answer.
double sorted_mad(const std::vector<double>& v, double center) {
  const size_t n = v.size(), wanted = n / 2;  // the 0-based rank of the middle deviation
  if (n == 0) return kNaN;
  const size_t split = static_cast<size_t>(std::lower_bound(v.begin(), v.end(), center) - v.begin());
  if (!std::isfinite(center)) {
    size_t right = split, left = split;
    double previous = 0.0, current = 0.0;
    for (size_t rank = 0; rank <= wanted; ++rank) {
      previous = current;
      const bool take_left = left > 0 && (right == n || center - v[left - 1] <= v[right] - center);
      current = take_left ? std::fabs(v[--left] - center) : std::fabs(v[right++] - center);
    }
    return n % 2 == 1 ? current : (current + previous) / 2.0;
  }
  const size_t below_count = split, above_count = n - split;
  const auto below = [&](size_t i) { return center - v[split - 1 - i]; };  // ascending in i
  const auto above = [&](size_t j) { return v[split + j] - center; };      // ascending in j
  const auto smallest = [&](size_t k) {  // the k-th smallest deviation (0-based)
    // The k + 1 smallest are the first `taken` below and the first k + 1 - taken above, for the least `taken` whose
    // next one below is no nearer than the last one above.
    size_t low = k + 1 > above_count ? k + 1 - above_count : 0, high = std::min(k + 1, below_count);
    while (low < high) {
      const size_t taken = low + (high - low) / 2;
      if (below(taken) < above(k - taken)) {
        low = taken + 1;
      } else {
        high = taken;
      }
    }
    const size_t from_above = k + 1 - low;
    if (low == 0) return above(from_above - 1);
    if (from_above == 0) return below(low - 1);
    return std::max(below(low - 1), above(from_above - 1));
  };
  const double middle = smallest(wanted);
  return n % 2 == 1 ? middle : (middle + smallest(wanted - 1)) / 2.0;
}

// A sliding window's non-NaN values, kept sorted as values enter and leave (a binary search and a move each), so
// its median and MAD cost a lookup and a short walk where copying and partitioning the window cost ten times more:
// a 180,000-step log of 8 ranks took 10 s at a 500-step window.
class SortedWindow {
 public:
  void add(double x) {
    if (!std::isnan(x)) values_.insert(std::upper_bound(values_.begin(), values_.end(), x), x);
  }
  void remove(double x) {
    if (!std::isnan(x)) values_.erase(std::lower_bound(values_.begin(), values_.end(), x));
  }
  size_t size() const { return values_.size(); }
  double median() const { return values_.empty() ? kNaN : sorted_median(values_); }
  double mad(double center) const { return sorted_mad(values_, center); }

 private:
  std::vector<double> values_;
};

}  // namespace

std::vector<double> trailing_robust_z(const std::vector<double>& x, int64_t window, int64_t min_history, double min_scale) {
  std::vector<double> z(x.size(), kNaN);
  SortedWindow history;
  size_t begin = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    const auto wanted_begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
    for (; begin < wanted_begin; ++begin) history.remove(x[begin]);
    if (t > 0) history.add(x[t - 1]);
    if (static_cast<int64_t>(t - begin) < min_history || std::isnan(x[t]) || history.size() == 0) continue;
    const double center = history.median();
    const double scale = std::max(1.4826 * history.mad(center), min_scale);
    z[t] = (x[t] - center) / scale;
  }
  return z;
}

std::vector<double> shift_z(const std::vector<double>& x, int64_t window, int64_t horizon, int64_t min_history,
                            double min_scale) {
  std::vector<double> z(x.size(), kNaN);
  if (horizon < 1 || static_cast<int64_t>(x.size()) < horizon) return z;
  SortedWindow before, after;
  size_t begin = 0;
  const auto span = static_cast<size_t>(horizon);
  for (size_t t = 0; t < span - 1; ++t) after.add(x[t]);
  for (size_t t = 0; t + span <= x.size(); ++t) {
    const auto wanted_begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
    for (; begin < wanted_begin; ++begin) before.remove(x[begin]);
    if (t > 0) {
      before.add(x[t - 1]);
      after.remove(x[t - 1]);
    }
    after.add(x[t + span - 1]);
    const auto history = static_cast<int64_t>(t - begin);
    if (history < min_history || 2 * static_cast<int64_t>(before.size()) < history ||
        2 * static_cast<int64_t>(after.size()) < horizon)
      continue;
    const double center = before.median();
    const double scale = std::max(1.4826 * before.mad(center), min_scale);
    const double error = 1.2533 * scale *
                         std::sqrt(1.0 / static_cast<double>(after.size()) + 1.0 / static_cast<double>(before.size()));
    z[t] = (after.median() - center) / error;
  }
  return z;
}

double roughness(const std::vector<double>& x, int64_t window) {
  if (x.size() < 3) return kNaN;
  const int64_t half = std::max<int64_t>(1, window / 2);
  std::vector<double> residuals;
  SortedWindow centered;     // x[out, in)
  size_t in = 0, out = 0;
  for (size_t t = 0; t < x.size(); ++t) {
    const auto lo = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - half));
    const auto hi = std::min(x.size(), t + static_cast<size_t>(half) + 1);
    for (; in < hi; ++in) centered.add(x[in]);
    for (; out < lo; ++out) centered.remove(x[out]);
    residuals.push_back(std::fabs(x[t] - centered.median()));
  }
  const double level = std::fabs(median(x));
  return level > 0 ? median(residuals) / level : kNaN;
}

}  // namespace lrkit::diagnostics
