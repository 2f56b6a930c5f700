// The skip-step policy's detector against a brute-force scoring of the same
// rule written out here, and its edges: the window filling, spikes kept out
// of it, the third spike in a row entering, non-finite values, state round trips.
#include "lrkit/diagnostics/spike_detector.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace {

using lrkit::diagnostics::SpikeDetector;

double brute_z(const std::vector<double>& window, double x) {
  double mean = 0, squares = 0;
  for (double v : window) mean += v / static_cast<double>(window.size());
  for (double v : window) squares += (v - mean) * (v - mean) / static_cast<double>(window.size());
  return (x - mean) / std::sqrt(squares);
}

TEST(SpikeDetector, ScoresAgainstTheValuesThatEnteredAndKeepsSpikesOut) {
  std::mt19937 rng(7);
  std::normal_distribution<double> noise(2.0, 0.1);
  SpikeDetector detector(4.0, 16, "loss_z", "window");
  std::vector<double> entered;  // the brute force's own window
  int spikes = 0, in_a_row = 0;
  for (int t = 0; t < 400; ++t) {
    const double x = t % 37 == 36 ? 5.0 : noise(rng);  // a spike every 37 updates
    const auto scored = detector.score(x);
    if (entered.size() < 16) {
      EXPECT_TRUE(std::isnan(scored.z)) << t;
      EXPECT_FALSE(scored.spike) << t;
    } else {
      const std::vector<double> window(entered.end() - 16, entered.end());
      EXPECT_NEAR(scored.z, brute_z(window, x), 1e-9 * std::fabs(scored.z)) << t;
      EXPECT_EQ(scored.spike, scored.z > 4.0) << t;
    }
    in_a_row = scored.spike ? in_a_row + 1 : 0;
    if (!scored.spike || in_a_row >= 3) entered.push_back(x);
    spikes += scored.spike;
    if (t % 37 == 36) {
      EXPECT_TRUE(scored.spike) << "the planted spike at " << t << " (z " << scored.z << ")";
    }
  }
  EXPECT_EQ(spikes, 400 / 37) << "the planted spikes, nothing else";
  EXPECT_EQ(detector.state().window, std::vector<double>(entered.end() - 16, entered.end()));
}

// llm.c's detector puts the new value into the statistics it scores it against, which bounds z at
// (n - 1) / sqrt(n); here a spike scores as far out as it is.
TEST(SpikeDetector, AFarSpikeScoresFarBeyondLlmcsBound) {
  SpikeDetector detector(6.0, 128, "loss_z", "window");
  for (int t = 0; t < 128; ++t) detector.score(t % 2 == 0 ? 1.0 : 1.2);
  const auto scored = detector.score(1e6);
  EXPECT_GT(scored.z, 127.0 / std::sqrt(128.0) * 1000);
  EXPECT_TRUE(scored.spike);
}

TEST(SpikeDetector, FromTheThirdSpikeInARowOnALastingLevelEntersTheWindow) {
  SpikeDetector detector(3.0, 4, "loss_z", "window");
  for (double x : {1.0, 1.1, 0.9, 1.0}) detector.score(x);
  EXPECT_TRUE(detector.score(10.0).spike);
  EXPECT_TRUE(detector.score(10.0).spike);
  EXPECT_EQ(detector.state().window, (std::vector<double>{1.0, 1.1, 0.9, 1.0})) << "the first two spikes stay out";
  EXPECT_TRUE(detector.score(10.0).spike);
  EXPECT_EQ(detector.state().window, (std::vector<double>{1.1, 0.9, 1.0, 10.0})) << "the third enters";
  EXPECT_EQ(detector.state().spikes_in_a_row, 3);
  int more = 0;
  while (detector.score(10.0).spike) ++more;
  EXPECT_LE(more, 2) << "the new level is learnt within the window";
  EXPECT_EQ(detector.state().spikes_in_a_row, 0);
}

TEST(SpikeDetector, NonFiniteValuesNeverEnterAndAreSpikesOnlyWhenTheThresholdIsOn) {
  SpikeDetector on(5.0, 2, "grad_z", "window"), off(0.0, 2, "grad_z", "window");
  for (auto* d : {&on, &off})
    for (double x : {1.0, 2.0}) d->score(x);
  for (double x : {INFINITY, NAN}) {
    const auto a = on.score(x), b = off.score(x);
    EXPECT_TRUE(a.spike);
    EXPECT_FALSE(b.spike);
    EXPECT_EQ(std::isnan(x), std::isnan(a.z));
  }
  EXPECT_EQ(on.state().window, (std::vector<double>{1.0, 2.0}));
  EXPECT_EQ(off.state().window, (std::vector<double>{1.0, 2.0}));
  const auto far = off.score(1e9);
  EXPECT_FALSE(far.spike) << "threshold 0 never skips";
  EXPECT_GT(far.z, 1e9) << "but still scores";
}

TEST(SpikeDetector, AFlatWindowScoresEqualValuesZeroAndOthersInfinite) {
  SpikeDetector detector(2.0, 3, "loss_z", "window");
  for (int t = 0; t < 3; ++t) detector.score(4.0);
  EXPECT_EQ(detector.score(4.0).z, 0.0);
  EXPECT_EQ(detector.score(4.5).z, INFINITY);
  EXPECT_EQ(detector.score(3.5).z, -INFINITY);
}

TEST(SpikeDetector, AStateRestoredScoresAsTheOriginal) {
  SpikeDetector a(2.5, 8, "loss_z", "window"), b(2.5, 8, "loss_z", "window");
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  for (int t = 0; t < 50; ++t) a.score(t % 11 == 10 ? 9.0 : u(rng));
  b.restore(a.state());
  for (int t = 0; t < 50; ++t) {
    const double x = t % 7 == 6 ? 9.0 : u(rng);
    const auto sa = a.score(x), sb = b.score(x);
    EXPECT_EQ(sa.z, sb.z);
    EXPECT_EQ(sa.spike, sb.spike);
  }
  SpikeDetector smaller(2.5, 2, "loss_z", "window");
  smaller.restore(a.state());
  const auto full = a.state().window;
  EXPECT_EQ(smaller.state().window, std::vector<double>(full.end() - 2, full.end())) << "the newest";
  EXPECT_THROW(b.restore({{1.0, NAN}, 0}), std::invalid_argument);
  EXPECT_THROW(b.restore({{1.0, 2.0}, -1}), std::invalid_argument) << "a count below 0 (a damaged checkpoint's)";
}

TEST(SpikeDetector, BadSettingsAreNamed) {
  try {
    SpikeDetector(-1.0, 8, "train.skip_loss_z", "train.spike_window");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "train.skip_loss_z must be a number >= 0 (0: never skip; got -1)");
  }
  try {
    SpikeDetector(1.0, 1, "train.skip_grad_z", "train.spike_window");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "train.spike_window must be >= 2 (got 1)");
  }
  EXPECT_THROW(SpikeDetector(NAN, 8, "z", "w"), std::invalid_argument);
}

}  // namespace
