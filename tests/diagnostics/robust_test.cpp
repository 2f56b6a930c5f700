// The robust statistics the report scores with: median, MAD, the trailing robust z, the shift z and roughness,
// against copies of each window computed directly.
#include "lrkit/diagnostics/robust.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace lrkit::diagnostics {
namespace {

TEST(Robust, MedianMadAndTrailingZ) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_TRUE(std::isnan(median({NAN})));
  EXPECT_EQ(mad({1, 2, 3, 4, 100}, 3), 1);
  const auto z = trailing_robust_z({1, 2, 3, 2, 1, 2, 3, 2, 50}, 8, 4, 1e-9);
  EXPECT_TRUE(std::isnan(z[3]));
  EXPECT_NEAR(z[8], (50 - 2) / (1.4826 * 0.5), 1e-9);  // MAD of {1,0,1,0,1,0,1,0} is 0.5
  EXPECT_NEAR(roughness(std::vector<double>(100, 5.0), 10), 0.0, 1e-15);
}

// The sliding sorted window gives exactly what a median and MAD of each step's copied window give: with NaNs,
// ties, infinities, odd and even counts, every window from 1 to 40 and a few long ones (the MAD's binary search).
TEST(Robust, TrailingZEqualsTheMedianAndMadOfEachWindow) {
  std::mt19937_64 rng(9);
  std::uniform_int_distribution<int> kind(0, 19), small(0, 4);
  std::normal_distribution<double> noise;
  std::vector<double> x(600);
  for (auto& v : x) {
    const int k = kind(rng);
    v = k == 0 ? NAN : k == 1 ? INFINITY : k < 6 ? static_cast<double>(small(rng)) : noise(rng);
  }
  std::vector<int64_t> windows;
  for (int64_t window = 1; window <= 40; ++window) windows.push_back(window);
  for (int64_t window : {101, 256, 257}) windows.push_back(window);
  for (const int64_t window : windows) {
    const auto z = trailing_robust_z(x, window, window / 2, 1e-3);
    for (size_t t = 0; t < x.size(); ++t) {
      const auto begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
      const std::vector<double> history(x.begin() + static_cast<std::ptrdiff_t>(begin), x.begin() + static_cast<std::ptrdiff_t>(t));
      double expected = NAN;
      const double center = median(history);
      if (static_cast<int64_t>(t - begin) >= window / 2 && !std::isnan(x[t]) && !std::isnan(center))
        expected = (x[t] - center) / std::max(1.4826 * mad(history, center), 1e-3);
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(z[t])) << "window " << window << " step " << t;
      } else {
        EXPECT_EQ(z[t], expected) << "window " << window << " step " << t;
      }
    }
    // roughness's centered window, likewise (without the infinities, which make it NaN either way)
    std::vector<double> finite = x;
    for (auto& v : finite) v = std::isinf(v) ? 1.5 : v;
    const int64_t half = std::max<int64_t>(1, window / 2);
    std::vector<double> residuals;
    for (size_t t = 0; t < finite.size(); ++t) {
      const auto lo = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - half));
      const auto hi = std::min(finite.size(), t + static_cast<size_t>(half) + 1);
      residuals.push_back(std::fabs(finite[t] - median(std::vector<double>(finite.begin() + static_cast<std::ptrdiff_t>(lo),
                                                                            finite.begin() + static_cast<std::ptrdiff_t>(hi)))));
    }
    EXPECT_EQ(roughness(finite, window), median(residuals) / std::fabs(median(finite))) << "window " << window;
  }
}

// shift_z is the median after against the median and MAD before, as copies of both windows give them: with NaNs,
// ties and infinities, windows 4-30 and horizons 1-12.
TEST(Robust, ShiftZEqualsTheMediansAndMadOfItsTwoWindows) {
  std::mt19937_64 rng(13);
  std::uniform_int_distribution<int> kind(0, 19), small(0, 4);
  std::normal_distribution<double> noise;
  std::vector<double> x(300);
  for (auto& v : x) {
    const int k = kind(rng);
    v = k == 0 ? NAN : k == 1 ? INFINITY : k < 6 ? static_cast<double>(small(rng)) : noise(rng);
  }
  const auto count = [](const std::vector<double>& v) {
    return static_cast<int64_t>(std::count_if(v.begin(), v.end(), [](double a) { return !std::isnan(a); }));
  };
  for (int64_t window = 4; window <= 30; window += 2)
    for (int64_t horizon = 1; horizon <= 12; ++horizon) {
      const auto z = shift_z(x, window, horizon, window / 2, 1e-3);
      ASSERT_EQ(z.size(), x.size());
      for (size_t t = 0; t < x.size(); ++t) {
        const auto begin = static_cast<size_t>(std::max<int64_t>(0, static_cast<int64_t>(t) - window));
        double expected = NAN;
        if (t + static_cast<size_t>(horizon) <= x.size()) {
          const std::vector<double> before(x.begin() + static_cast<std::ptrdiff_t>(begin), x.begin() + static_cast<std::ptrdiff_t>(t));
          const std::vector<double> after(x.begin() + static_cast<std::ptrdiff_t>(t),
                                          x.begin() + static_cast<std::ptrdiff_t>(t) + horizon);
          const auto history = static_cast<int64_t>(t - begin);
          if (history >= window / 2 && 2 * count(before) >= history && 2 * count(after) >= horizon) {
            const double center = median(before);
            const double error = 1.2533 * std::max(1.4826 * mad(before, center), 1e-3) *
                                 std::sqrt(1.0 / static_cast<double>(count(after)) + 1.0 / static_cast<double>(count(before)));
            expected = (median(after) - center) / error;
          }
        }
        if (std::isnan(expected)) {
          EXPECT_TRUE(std::isnan(z[t])) << "window " << window << " horizon " << horizon << " step " << t;
        } else {
          EXPECT_EQ(z[t], expected) << "window " << window << " horizon " << horizon << " step " << t;
        }
      }
    }
  EXPECT_TRUE(std::isnan(shift_z({1, 2, 3}, 4, 5, 0, 1e-3).at(0)));  // a horizon longer than the series
}

}  // namespace
}  // namespace lrkit::diagnostics
