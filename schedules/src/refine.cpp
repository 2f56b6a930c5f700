#include "lrkit/schedules/refine.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>

#include "lrkit/common/numbers.hpp"

namespace lrkit::schedules {

namespace {

// Multiset of value ranks with a cursor on its k-th smallest element. A slide
// adds one element and removes one, so the cursor moves by at most a couple of
// occupied ranks; an occupancy bitset finds them with a word scan each.
class MedianCursor {
 public:
  MedianCursor(size_t ranks, int64_t k) : count_(ranks, 0), occupied_((ranks + 63) / 64, 0), k_(k) {}

  void add(size_t rank, int64_t times) {
    count_[rank] += times;
    occupied_[rank / 64] |= uint64_t{1} << (rank % 64);
    if (rank < cursor_) below_ += times;
  }
  void remove(size_t rank) {
    if (--count_[rank] == 0) occupied_[rank / 64] &= ~(uint64_t{1} << (rank % 64));
    if (rank < cursor_) --below_;
  }
  // Rank of the k-th smallest element (0-based k).
  size_t kth() {
    while (k_ < below_) {
      cursor_ = previous_occupied(cursor_);
      below_ -= count_[cursor_];
    }
    while (k_ >= below_ + count_[cursor_]) {
      below_ += count_[cursor_];
      cursor_ = next_occupied(cursor_);
    }
    return cursor_;
  }

 private:
  size_t next_occupied(size_t rank) const {
    const size_t from = rank + 1;
    size_t word = from / 64;
    uint64_t bits = occupied_[word] & (~uint64_t{0} << (from % 64));
    while (bits == 0) bits = occupied_[++word];
    return word * 64 + static_cast<size_t>(__builtin_ctzll(bits));
  }
  size_t previous_occupied(size_t rank) const {
    const size_t upto = rank - 1;
    size_t word = upto / 64;
    const size_t bit = upto % 64;
    uint64_t bits = bit == 63 ? occupied_[word] : occupied_[word] & ((uint64_t{2} << bit) - 1);
    while (bits == 0) bits = occupied_[--word];
    return word * 64 + 63 - static_cast<size_t>(__builtin_clzll(bits));
  }

  std::vector<int64_t> count_;
  std::vector<uint64_t> occupied_;
  int64_t k_;
  size_t cursor_ = 0;
  int64_t below_ = 0;  // elements with rank < cursor_
};

}  // namespace

std::vector<double> sliding_median(const std::vector<double>& values, int64_t width) {
  if (width < 1 || width % 2 == 0)
    throw std::invalid_argument("median filter width must be odd and positive (got " + std::to_string(width) + ")");
  const size_t n = values.size();
  if (n == 0 || width == 1) return values;

  std::vector<std::pair<double, size_t>> sorted(n);
  for (size_t i = 0; i < n; ++i) sorted[i] = {values[i], i};
  std::sort(sorted.begin(), sorted.end());
  std::vector<size_t> rank(n);
  for (size_t r = 0; r < n; ++r) rank[sorted[r].second] = r;

  const int64_t half = width / 2;
  const int64_t last = static_cast<int64_t>(n) - 1;
  auto clamp = [&](int64_t i) { return static_cast<size_t>(std::clamp<int64_t>(i, 0, last)); };

  MedianCursor window(n, half);
  // Window centred on 0: `half` copies of values[0] on the left, then 0..half.
  window.add(rank[0], half);
  for (int64_t i = 0; i <= half; ++i) window.add(rank[clamp(i)], 1);

  std::vector<double> out(n);
  for (int64_t t = 0; t <= last; ++t) {
    out[static_cast<size_t>(t)] = sorted[window.kth()].first;
    window.remove(rank[clamp(t - half)]);
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

size_t fill_nonfinite_norms(std::vector<double>& norms) {
  size_t filled = 0;
  std::optional<size_t> last;  // the last finite norm's index so far
  for (size_t i = 0; i < norms.size(); ++i) {
    if (!std::isfinite(norms[i])) continue;
    const size_t gap = last ? *last + 1 : 0;  // the non-finite norms before i
    for (size_t j = gap; j < i; ++j)
      norms[j] = last ? norms[*last] + (norms[i] - norms[*last]) * static_cast<double>(j - *last) / static_cast<double>(i - *last)
                      : norms[i];
    filled += i - gap;
    last = i;
  }
  if (!last)
    throw std::invalid_argument("no gradient norm of the " + std::to_string(norms.size()) +
                                " is finite: every update of that run was skipped or diverged");
  filled += norms.size() - 1 - *last;
  std::fill(norms.begin() + static_cast<std::ptrdiff_t>(*last) + 1, norms.end(), norms[*last]);
  return filled;
}

std::vector<double> refine_from_norms(std::vector<double> norms, int64_t total, NormKind kind, double tau) {
  if (total < 1 || total > kMostRefinedSteps)
    throw std::invalid_argument("refinement needs a run of 1 to " + std::to_string(kMostRefinedSteps) + " steps (got " +
                                std::to_string(total) + ")");
  if (norms.empty()) throw std::invalid_argument("refinement needs a gradient-norm history; it is empty");
  if (!(tau >= 0.0 && tau <= 1.0)) throw std::invalid_argument("refinement tau must be in [0, 1] (got " + format_number(tau) + ")");
  fill_nonfinite_norms(norms);
  for (size_t i = 0; i < norms.size(); ++i)
    if (norms[i] <= 0.0)
      throw std::invalid_argument("gradient norm at index " + std::to_string(i) + " is " + format_number(norms[i]) +
                                  "; refinement needs norms > 0");

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
