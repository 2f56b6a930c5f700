#include "lrkit/schedules/refine.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {
namespace {

std::vector<double> brute_median(const std::vector<double>& v, int64_t width) {
  const int64_t n = static_cast<int64_t>(v.size()), h = width / 2;
  std::vector<double> out;
  for (int64_t t = 0; t < n; ++t) {
    std::vector<double> window;
    for (int64_t i = t - h; i <= t + h; ++i) window.push_back(v[static_cast<size_t>(std::clamp<int64_t>(i, 0, n - 1))]);
    std::nth_element(window.begin(), window.begin() + h, window.end());
    out.push_back(window[static_cast<size_t>(h)]);
  }
  return out;
}

TEST(SlidingMedian, EqualsBruteForceWithNearestPadding) {
  std::mt19937 rng(3);
  for (int trial = 0; trial < 60; ++trial) {
    const size_t n = 1 + rng() % 200;
    std::vector<double> v(n);
    for (auto& x : v) x = static_cast<double>(rng() % 17);  // many ties
    const int64_t width = 2 * static_cast<int64_t>(rng() % 150) + 1;
    EXPECT_EQ(sliding_median(v, width), brute_median(v, width)) << "n=" << n << " width=" << width;
  }
  EXPECT_THROW(sliding_median({1, 2}, 2), std::invalid_argument);
}

TEST(ResampleLinear, KeepsEndsAndInterpolates) {
  EXPECT_EQ(resample_linear({0, 10}, 3), (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(resample_linear({1, 2, 3}, 3), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(resample_linear({4}, 3), (std::vector<double>{4, 4, 4}));
}

TEST(Refine, ConstantNormsGiveExactlyLinearDecayToZero) {
  for (auto kind : {NormKind::L2, NormKind::L1}) {
    for (int64_t total : {1, 7, 1000}) {
      const auto eta = refine_from_norms(std::vector<double>(50, 3.0), total, kind);
      ASSERT_EQ(static_cast<int64_t>(eta.size()), total + 1);
      const auto linear = parse_schedule("linear(peak=1)", total);
      for (int64_t t = 0; t <= total; ++t) EXPECT_NEAR(eta[static_cast<size_t>(t)], linear(t), 1e-12) << t;
    }
  }
}

TEST(Refine, FormulaOnASmallHistoryWithoutSmoothing) {
  const std::vector<double> g = {1, 2, 4, 2};  // T = 4, tau = 0: no smoothing; G_T = G_3
  const auto eta = refine_from_norms(g, 4, NormKind::L1, 0.0);
  // w = 1/G = 1, 0.5, 0.25, 0.5, (0.5); eta_t = w_t * sum_{p>t} w_p
  const std::vector<double> raw = {1 * 1.75, 0.5 * 1.25, 0.25 * 1.0, 0.5 * 0.5, 0.0};
  for (size_t t = 0; t < raw.size(); ++t) EXPECT_NEAR(eta[t], raw[t] / 1.75, 1e-15) << t;
  const auto l2 = refine_from_norms(g, 4, NormKind::L2, 0.0);  // w = 1/G^2 = 1, .25, .0625, .25, .25
  EXPECT_NEAR(l2[1], 0.25 * (0.0625 + 0.25 + 0.25) / (1 * (0.25 + 0.0625 + 0.25 + 0.25)), 1e-15);
}

TEST(Refine, GrowingNormsAnnealTheEndAndSpikesAreSmoothedAway) {
  std::vector<double> g(1000);
  for (size_t i = 0; i < g.size(); ++i) g[i] = 1.0 + static_cast<double>(i) / 500.0;
  std::vector<double> spiky = g;
  spiky[500] = 1000.0;
  const auto eta = refine_from_norms(g, 1000, NormKind::L2);
  const auto eta_spiky = refine_from_norms(spiky, 1000, NormKind::L2);
  // One spike only shifts each window's median by one rank.
  for (size_t t = 0; t < eta.size(); ++t) ASSERT_NEAR(eta[t], eta_spiky[t], 1e-3) << t;
  EXPECT_GT(eta[500], 0.0);
  EXPECT_LT(eta[900], 1.0 - 0.9);  // below linear decay near the end: sharper anneal
}

// A skipped update (train.nonfinite=skip, a GradScaler's overflow) logs a non-finite norm, as does a diverged run's
// last step: refinement refused the whole history for one such step.
TEST(Refine, NonFiniteNormsAreFilledFromTheirNeighbours) {
  std::vector<double> norms = {NAN, HUGE_VAL, 2, 4, NAN, -HUGE_VAL, 10, 12, NAN};
  EXPECT_EQ(fill_nonfinite_norms(norms), 5u);
  EXPECT_EQ(norms, (std::vector<double>{2, 2, 2, 4, 6, 8, 10, 12, 12}));
  std::vector<double> clean = {1, 2};
  EXPECT_EQ(fill_nonfinite_norms(clean), 0u);
  EXPECT_EQ(clean, (std::vector<double>{1, 2}));
  const std::vector<double> skipped = {3, 1, NAN, 5, 4, HUGE_VAL, 2, 2};
  std::vector<double> filled = skipped;
  fill_nonfinite_norms(filled);
  for (const auto kind : {NormKind::L1, NormKind::L2}) {
    const auto a = refine_from_norms(skipped, 50, kind), b = refine_from_norms(filled, 50, kind);
    ASSERT_EQ(a.size(), b.size());
    for (size_t t = 0; t < a.size(); ++t) EXPECT_EQ(a[t], b[t]) << t;
  }
}

TEST(Refine, RejectsBadInputNamingTheIndex) {
  try {
    refine_from_norms({1, 2, 0, 3}, 10, NormKind::L2);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "gradient norm at index 2 is 0; refinement needs norms > 0");
  }
  try {  // after the filling: the index is still the norm's own
    refine_from_norms({NAN, 2, -1, 3}, 10, NormKind::L2);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "gradient norm at index 2 is -1; refinement needs norms > 0");
  }
  EXPECT_THROW(refine_from_norms({}, 10, NormKind::L2), std::invalid_argument);
  try {
    refine_from_norms({NAN, HUGE_VAL, -HUGE_VAL}, 10, NormKind::L2);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "no gradient norm of the 3 is finite: every update of that run was skipped or diverged");
  }
  EXPECT_THROW(refine_from_norms({1}, 0, NormKind::L2), std::invalid_argument);
  EXPECT_THROW(refine_from_norms({1}, 10, NormKind::L2, 1.5), std::invalid_argument);
  // 10^10 steps asked for an 80 GB table: Python's refine_multipliers ended in "MemoryError: std::bad_alloc".
  try {
    refine_from_norms({1, 2}, 10'000'000'000, NormKind::L1);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "refinement needs a run of 1 to 100000000 steps (got 10000000000)");
  }
}

}  // namespace
}  // namespace lrkit::schedules
