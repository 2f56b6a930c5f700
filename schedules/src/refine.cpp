#include "lrkit/schedules/refine.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace lrkit::schedules {

namespace {

// Fenwick tree of counts over value ranks, with O(log n) k-th smallest lookup.
class RankCounter {
 public:
  explicit RankCounter(size_t n) : tree_(n + 1, 0) {
    top_bit_ = 1;
    while (top_bit_ * 2 <= n) top_bit_ *= 2;
  }
  void add(size_t rank, int64_t delta) {
    for (size_t i = rank + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  // 0-based rank of the k-th smallest element (k is 0-based).
  size_t kth(int64_t k) const {
    size_t pos = 0;
    for (size_t step = top_bit_; step > 0; step >>= 1) {
      const size_t next = pos + step;
      if (next < tree_.size() && tree_[next] <= k) {
        pos = next;
        k -= tree_[next];
      }
    }
    return pos;
  }

 private:
  std::vector<int64_t> tree_;
  size_t top_bit_;
};

}  // namespace

std::vector<double> sliding_median(const std::vector<double>& values, int64_t width) {
  if (width < 1 || width % 2 == 0)
    throw std::invalid_argument("median filter width must be odd and positive (got " + std::to_string(width) + ")");
  const size_t n = values.size();
  if (n == 0 || width == 1) return values;

  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return values[a] < values[b]; });
  std::vector<size_t> rank(n);
  for (size_t r = 0; r < n; ++r) rank[order[r]] = r;

  const int64_t half = width / 2;
  const int64_t last = static_cast<int64_t>(n) - 1;
  auto clamp = [&](int64_t i) { return static_cast<size_t>(std::clamp<int64_t>(i, 0, last)); };

  RankCounter window(n);
  // Window centred on 0: `half` copies of values[0] on the left, then 0..half.
  window.add(rank[0], half);
  for (int64_t i = 0; i <= half; ++i) window.add(rank[clamp(i)], 1);

  std::vector<double> out(n);
  for (int64_t t = 0; t <= last; ++t) {
    out[static_cast<size_t>(t)] = values[order[window.kth(half)]];
    window.add(rank[clamp(t - half)], -1);
    window.add(rank[clamp(t + half + 1)], 1);
  }
  return out;
}

std::vector<double> resample_linear(const std::vector<double>& values, int64_t count) {
  if (values.empty() || count < 1) throw std::invalid_argument("resample_linear: nothing to resample");
  const size_t n = values.size();
  if (static_cast<size_t>(count) == n) return values;
  std::vector<double> out(static_cast<size_t>(count));
  if (n == 1 || count == 1) {
    std::fill(out.begin(), out.end(), values.front());
    return out;
  }
  const double scale = static_cast<double>(n - 1) / static_cast<double>(count - 1);
  for (int64_t j = 0; j < count; ++j) {
    const double x = static_cast<double>(j) * scale;
    const size_t i = std::min(static_cast<size_t>(x), n - 2);
    const double f = x - static_cast<double>(i);
    out[static_cast<size_t>(j)] = values[i] + (values[i + 1] - values[i]) * f;
  }
  return out;
}

std::vector<double> refine_from_norms(const std::vector<double>& norms, int64_t total, NormKind kind, double tau) {
  if (total < 1) throw std::invalid_argument("refinement needs a run of at least 1 step (got " + std::to_string(total) + ")");
  if (norms.empty()) throw std::invalid_argument("refinement needs a gradient-norm history; it is empty");
  if (!(tau >= 0.0 && tau <= 1.0)) throw std::invalid_argument("refinement tau must be in [0, 1] (got " + std::to_string(tau) + ")");
  for (size_t i = 0; i < norms.size(); ++i)
    if (!std::isfinite(norms[i]) || norms[i] <= 0.0)
      throw std::invalid_argument("gradient norm at index " + std::to_string(i) + " is " + std::to_string(norms[i]) +
                                  "; refinement needs finite positive norms");

  const std::vector<double> resampled = resample_linear(norms, total);
  const int64_t width = 2 * static_cast<int64_t>(std::floor(tau * static_cast<double>(total) / 2.0)) + 1;
  std::vector<double> smooth = sliding_median(resampled, width);
  smooth.push_back(smooth.back());  // G_T: the end point, nearest value

  const size_t points = smooth.size();
  std::vector<double> weight(points);
  for (size_t t = 0; t < points; ++t)
    weight[t] = kind == NormKind::L2 ? 1.0 / (smooth[t] * smooth[t]) : 1.0 / smooth[t];

  std::vector<double> eta(points, 0.0);
  long double suffix = 0.0L;  // sum_{p > t} w_p
  double peak = 0.0;
  for (size_t t = points; t-- > 0;) {
    eta[t] = weight[t] * static_cast<double>(suffix);
    suffix += weight[t];
    peak = std::max(peak, eta[t]);
  }
  for (double& v : eta) v /= peak;
  return eta;
}

}  // namespace lrkit::schedules
