// The weight formulas of loss-based reweighting on batches with known answers.
#include "lrkit/reweight/sample_weights.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numeric>
#include <random>

namespace lrkit::reweight {
namespace {

const Strategy kAll[] = {Strategy::linupper, Strategy::quadratic, Strategy::extremes, Strategy::linear};

std::vector<double> random_losses(int n, unsigned seed) {
  std::mt19937 gen(seed);
  std::lognormal_distribution<double> loss(0.5, 0.6);
  std::vector<double> l(static_cast<size_t>(n));
  for (auto& x : l) x = loss(gen);
  return l;
}

TEST(SampleWeights, ScoresMatchTheDefinitions) {
  EXPECT_DOUBLE_EQ(score(Strategy::linupper, -1), 0.0);
  EXPECT_DOUBLE_EQ(score(Strategy::linupper, 0.5), 1.0);
  EXPECT_DOUBLE_EQ(score(Strategy::quadratic, 0.5), 0.75);
  EXPECT_DOUBLE_EQ(score(Strategy::extremes, -0.25), 0.25);
  EXPECT_DOUBLE_EQ(score(Strategy::linear, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(score(Strategy::uniform, 0.7), 0.0);
}

TEST(SampleWeights, HandComputedBatch) {
  // Losses 1, 2, 3: x = -1, 0, 1. Linear: f = 0, 0.5, 1; r = 0.5: w ~ e^0, e^1, e^2.
  const auto w = sample_weights({1.0, 2.0, 3.0}, Strategy::linear, 0.5);
  const double z = 1 + std::exp(1.0) + std::exp(2.0);
  EXPECT_NEAR(w[0], 1 / z, 1e-15);
  EXPECT_NEAR(w[1], std::exp(1.0) / z, 1e-15);
  EXPECT_NEAR(w[2], std::exp(2.0) / z, 1e-15);
  // Quadratic favours the middle; extremes the ends.
  const auto q = sample_weights({1.0, 2.0, 3.0}, Strategy::quadratic, 1.0);
  EXPECT_GT(q[1], q[0]);
  EXPECT_DOUBLE_EQ(q[0], q[2]);
  const auto e = sample_weights({1.0, 2.0, 3.0}, Strategy::extremes, 1.0);
  EXPECT_LT(e[1], e[0]);
}

TEST(SampleWeights, SumToOneAndRatioIsBoundedByEToTheOneOverR) {
  for (Strategy s : kAll)
    for (double r : {0.1, 0.4, 1.0, 3.0})
      for (unsigned seed = 0; seed < 20; ++seed) {
        const auto w = sample_weights(random_losses(64, seed), s, r);
        EXPECT_NEAR(std::accumulate(w.begin(), w.end(), 0.0), 1.0, 1e-12);
        const auto stats = weight_stats(w);
        EXPECT_LE(stats.max_min_ratio, std::exp(1.0 / r) * (1 + 1e-12)) << to_string(s) << " r " << r;
        EXPECT_LE(stats.entropy, std::log(64.0) + 1e-12);
        EXPECT_LE(stats.effective_size, 64.0 + 1e-9);
      }
  // The bound is reached by linear (f spans [0, 1] exactly).
  const auto w = sample_weights({0.0, 1.0}, Strategy::linear, 0.4);
  EXPECT_NEAR(weight_stats(w).max_min_ratio, std::exp(1.0 / 0.4), 1e-9);
}

TEST(SampleWeights, LargeStrengthAndUniformAreTheTokenWeightedMean) {
  const auto losses = random_losses(32, 3);
  for (Strategy s : kAll) {
    const auto w = sample_weights(losses, s, 1e9);
    for (double x : w) EXPECT_NEAR(x, 1.0 / 32, 1e-9) << to_string(s);
  }
  const auto u = sample_weights(losses, Strategy::uniform, 0.4);
  for (double x : u) EXPECT_DOUBLE_EQ(x, 1.0 / 32);
  const auto stats = weight_stats(u);
  EXPECT_NEAR(stats.entropy, std::log(32.0), 1e-12);
  EXPECT_NEAR(stats.effective_size, 32.0, 1e-9);
  // Uneven sequences: weights proportional to token counts.
  const auto t = sample_weights({1.0, 5.0, 2.0}, Strategy::uniform, 1.0, {10, 30, 60});
  EXPECT_NEAR(t[0], 0.1, 1e-15);
  EXPECT_NEAR(t[1], 0.3, 1e-15);
  EXPECT_NEAR(t[2], 0.6, 1e-15);
}

TEST(SampleWeights, TheOrderOfTheBatchDoesNotMatter) {
  auto losses = random_losses(16, 9);
  const auto w = sample_weights(losses, Strategy::linupper, 0.4);
  std::vector<double> reversed_losses(losses.rbegin(), losses.rend());
  const auto v = sample_weights(reversed_losses, Strategy::linupper, 0.4);
  for (size_t i = 0; i < 16; ++i) EXPECT_DOUBLE_EQ(w[i], v[15 - i]);
}

TEST(SampleWeights, DegenerateBatches) {
  // All equal: x = 0 for every sample, so the weights are uniform.
  const auto w = sample_weights({2.0, 2.0, 2.0, 2.0}, Strategy::extremes, 0.1);
  for (double x : w) EXPECT_DOUBLE_EQ(x, 0.25);
  // A non-finite loss gets weight 0; the rest still sum to 1.
  const auto n = sample_weights({1.0, NAN, 3.0}, Strategy::linear, 1.0);
  EXPECT_EQ(n[1], 0.0);
  EXPECT_NEAR(n[0] + n[2], 1.0, 1e-15);
  // A tiny strength does not overflow.
  const auto tiny = sample_weights({0.0, 1.0, 2.0}, Strategy::linear, 1e-4);
  EXPECT_NEAR(tiny[2], 1.0, 1e-12);
}

// Losses near the double's limit made high - low Inf and every weight NaN; a strength so small that f / r is Inf did
// the same. Both now weigh the extremes as a tiny strength should: the highest loss takes the weight.
TEST(SampleWeights, LossesNearTheDoublesLimitAndATinyStrengthGiveWeightsNotNaN) {
  const auto huge = sample_weights({1e308, -1e308, 0.0}, Strategy::linear, 1.0);
  EXPECT_NEAR(huge[0] / huge[1], std::exp(1.0), 1e-12) << "f(1) - f(-1) = 1 over r = 1";
  EXPECT_NEAR(huge[0] + huge[1] + huge[2], 1.0, 1e-15);
  const auto tiny = sample_weights({1.0, 2.0, 3.0}, Strategy::linear, 1e-310);
  EXPECT_EQ(tiny, (std::vector<double>{0.0, 0.0, 1.0}));
  const auto same = sample_weights({1.0, 2.0, 3.0}, Strategy::linear, 0.5);
  const auto shifted = sample_weights({1e300 + 0.0, 2e300, 3e300}, Strategy::linear, 0.5);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(same[i], shifted[i], 1e-15) << "only the losses' order and spacing count";
}

TEST(SampleWeights, BadInputNamesTheProblem) {
  EXPECT_THROW(sample_weights({}, Strategy::linear, 1.0), std::invalid_argument);
  EXPECT_THROW(sample_weights({1.0}, Strategy::linear, 0.0), std::invalid_argument);
  EXPECT_THROW(sample_weights({1.0, 2.0}, Strategy::linear, 1.0, {1.0}), std::invalid_argument);
  EXPECT_THROW(sample_weights({1.0, 2.0}, Strategy::linear, 1.0, {1.0, 0.0}), std::invalid_argument);
  const auto message = [](const std::function<void()>& call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([] { sample_weights({1.0, 2.0}, Strategy::linear, 1.0, {1.0, NAN}); }),
            "sample_weights: sample 1's token count is nan; counts must be finite and > 0");
  EXPECT_EQ(message([] { weight_stats({0.5, -0.5}); }), "weight_stats: weight 1 is -0.5; weights are finite and >= 0");
  EXPECT_EQ(message([] { weight_stats({}); }), "weight_stats: no weights (an empty batch)");
  EXPECT_EQ(message([] { relative_weight_histogram({0.5, 0.5}, 10001, 4.0); }),
            "relative_weight_histogram: bins must be in [1, 10000] and max_relative a finite number > 0 (got 10001 and 4)");
  try {
    parse_strategy("cubic");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'cubic'"), std::string::npos);
  }
  for (Strategy s : {Strategy::uniform, Strategy::linupper, Strategy::quadratic, Strategy::extremes, Strategy::linear})
    EXPECT_EQ(parse_strategy(to_string(s)), s);
}

TEST(SampleWeights, HistogramOfRelativeWeights) {
  const auto h = relative_weight_histogram({0.25, 0.25, 0.25, 0.25}, 4, 2.0);  // N w = 1: bin 2 of [0, 2)
  EXPECT_EQ(h, (std::vector<double>{0, 0, 4, 0}));
  const auto g = relative_weight_histogram({0.9, 0.1}, 4, 1.0);  // 1.8 -> last bin, 0.2 -> bin 0
  EXPECT_EQ(g, (std::vector<double>{1, 0, 0, 1}));
}

}  // namespace
}  // namespace lrkit::reweight
