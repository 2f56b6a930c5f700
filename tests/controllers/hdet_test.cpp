// HDET's spread, permutations and auto-LR on problems whose answers are known.
#include "lrkit/controllers/hdet.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

namespace lrkit::controllers {
namespace {

TEST(Hdet, SpreadIsEvenlySpacedWithMeanExactlyOne) {
  for (int64_t n : {1, 2, 3, 4, 8, 9}) {
    HdetConfig c;
    c.replicas = n;
    c.alpha = 1.0 / 9.0;
    const auto rho = Hdet(c).spread();
    EXPECT_NEAR(std::accumulate(rho.begin(), rho.end(), 0.0) / static_cast<double>(n), 1.0, 1e-15) << n;
    if (n > 1) {
      EXPECT_DOUBLE_EQ(rho.front(), 1.0 - c.alpha);
      EXPECT_DOUBLE_EQ(rho.back(), 1.0 + c.alpha);
      for (size_t i = 2; i < rho.size(); ++i) EXPECT_NEAR(rho[i] - rho[i - 1], rho[1] - rho[0], 1e-15);
    } else {
      EXPECT_EQ(rho, std::vector<double>{1.0});
    }
  }
}

TEST(Hdet, PermutationsArePureFunctionsOfSeedAndSyncIndex) {
  HdetConfig c;
  c.replicas = 8;
  c.seed = 42;
  const Hdet h(c);
  int changed = 0;
  for (int64_t k = 0; k < 20; ++k) {
    auto p = h.permutation(k);
    EXPECT_EQ(p, h.permutation(k));
    changed += p != h.permutation(k + 1);
    std::sort(p.begin(), p.end());
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ(p[static_cast<size_t>(i)], i);
  }
  EXPECT_GE(changed, 18);
}

TEST(Hdet, AlphaZeroIsPlainDataParallelExactly) {
  HdetConfig c;
  c.replicas = 4;
  c.alpha = 0.0;
  c.sync_every = 3;
  const Hdet h(c);
  auto s = h.init();
  for (int step = 0; step < 30; ++step) {
    for (int64_t r = 0; r < 4; ++r) EXPECT_EQ(h.replica_value(s, r, 1e-3 * (step + 1)), 1e-3 * (step + 1));
    s = h.observe(s, {1.0 + step, 2.0, 0.5, 3.0});
    if (h.sync_due(s)) s = h.sync(s, 1e-3);
  }
  EXPECT_EQ(s.scale, 1.0);
  EXPECT_EQ(s.syncs, 10);
}

TEST(Hdet, ASyncIsDueAfterTheStepThatEndsAWindowCountingStepsNotYetObserved) {
  HdetConfig c;
  c.replicas = 2;
  c.sync_every = 4;
  const Hdet h(c);
  auto s = h.init();
  EXPECT_FALSE(h.sync_due(s)) << "step 0 ends no window";
  EXPECT_FALSE(h.sync_due_after(s, 3));
  EXPECT_TRUE(h.sync_due_after(s, 4));
  EXPECT_TRUE(h.sync_due_after(s, 8));
  for (int step = 1; step <= 9; ++step) {
    s = h.observe(s, {1.0, 2.0});
    EXPECT_EQ(h.sync_due(s), step % 4 == 0) << step;
    EXPECT_EQ(h.sync_due_after(s, 0), h.sync_due(s)) << step;
    EXPECT_EQ(h.sync_due_after(s, 3), (step + 3) % 4 == 0) << step;
  }
}

// Every window restarts f(x) = h x^2 / 2 at x = 1 and takes `steps` gradient
// steps: the best learning rate is 1 / h (one step to the minimum), and the
// window loss grows with |1 - eta h| on either side of it.
double auto_lr_end_point(double start_factor, bool paper_mode) {
  const double h = 2.0, best = 1.0 / h, steps = 3;
  HdetConfig c;
  c.replicas = 8;
  c.alpha = 1.0 / 9.0;
  c.sync_every = static_cast<int64_t>(steps);
  c.sigma = 0.1;
  c.paper_mode = paper_mode;
  c.seed = 7;
  const Hdet hdet(c);
  auto s = hdet.init();
  const double scheduled = start_factor * best;  // a constant base schedule
  for (int window = 0; window < 400; ++window) {
    std::vector<double> x(8, 1.0);
    for (int k = 0; k < steps; ++k) {
      std::vector<double> losses(8);
      for (size_t r = 0; r < 8; ++r) {
        x[r] -= hdet.replica_value(s, static_cast<int64_t>(r), scheduled) * h * x[r];
        losses[r] = std::min(h * x[r] * x[r] / 2, 1e300);
      }
      s = hdet.observe(s, losses);
    }
    EXPECT_TRUE(hdet.sync_due(s));
    s = hdet.sync(s, scheduled);
  }
  return hdet.base_value(s, scheduled) / best;
}

TEST(Hdet, AutoLrMovesTheBaseRateTowardTheBestFromBothSides) {
  for (bool paper : {false, true}) {
    const double from_low = auto_lr_end_point(0.2, paper);
    const double from_high = auto_lr_end_point(5.0, paper);
    RecordProperty(paper ? "paper_end_points" : "end_points", std::to_string(from_low) + " " + std::to_string(from_high));
    EXPECT_GT(from_low, 0.7) << "from 5x too low, paper mode " << paper;
    EXPECT_LT(from_low, 1.4) << "from 5x too low, paper mode " << paper;
    EXPECT_GT(from_high, 0.7) << "from 5x too high, paper mode " << paper;
    EXPECT_LT(from_high, 1.4) << "from 5x too high, paper mode " << paper;
  }
}

// A replica whose rate made its loss non-finite gets weight 0 and the others are weighed among themselves: the
// failure moves the base away from that rate instead of blocking the meta-update.
TEST(Hdet, AReplicaWithANonFiniteWindowLossGetsNoWeight) {
  HdetConfig c;
  c.replicas = 4;
  c.alpha = 1.0 / 3.0;  // rates 2/3, 8/9, 10/9, 4/3 of the base
  c.sync_every = 1;
  c.beta = 0.0;  // the velocity is the last Delta
  c.meta_lr = 1.0;
  c.sigma = 0.5;
  c.standardize = false;
  const Hdet h(c);
  const auto rho = [&](const HdetState& s, size_t r) { return h.replica_value(s, static_cast<int64_t>(r), 1.0); };
  for (double bad : {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    auto s = h.init();
    size_t top = 0;  // the replica with the highest rate diverges
    for (size_t r = 1; r < 4; ++r)
      if (rho(s, r) > rho(s, top)) top = r;
    std::vector<double> losses = {2.0, 2.5, 3.0, 3.5};
    losses[top] = bad;
    std::vector<double> weight(4, 0.0), finite;
    for (size_t r = 0; r < 4; ++r)
      if (r != top) finite.push_back(losses[r]);
    const double center = (finite[0] + finite[1] + finite[2]) / 3.0;
    double total = 0.0;
    for (size_t r = 0; r < 4; ++r)
      if (r != top) total += weight[r] = std::exp((center - losses[r]) / c.sigma);
    double expected = -1.0;
    for (size_t r = 0; r < 4; ++r) expected += weight[r] / total * rho(s, r);
    const auto before = s;
    s = h.sync(h.observe(s, losses), 1.0);
    EXPECT_NEAR(s.delta, expected, 1e-15) << bad;
    EXPECT_NEAR(s.scale, 1.0 + expected, 1e-15) << bad;
    // Equal finite losses: the mean rate of the replicas that did not diverge, below the base.
    s = before;
    losses = {2.0, 2.0, 2.0, 2.0};
    losses[top] = bad;
    s = h.sync(h.observe(s, losses), 1.0);
    EXPECT_NEAR(s.delta, (2.0 / 3.0 + 8.0 / 9.0 + 10.0 / 9.0) / 3.0 - 1.0, 1e-15) << bad;
  }
  // No finite loss: no signal, the base stays.
  auto s = h.init();
  s = h.sync(h.observe(s, std::vector<double>(4, std::numeric_limits<double>::quiet_NaN())), 1.0);
  EXPECT_EQ(s.scale, 1.0);
  EXPECT_EQ(s.delta, 0.0);
  EXPECT_EQ(s.syncs, 1);
}

TEST(Hdet, SharedGradientSgdReplicasAverageToTheBaseTrajectory) {
  // Linear gradients (a quadratic): the shared gradient is h * mean(x), and the
  // mean of rho is 1, so the replicas' mean follows plain SGD at the base rate.
  HdetConfig c;
  c.replicas = 5;
  c.alpha = 0.3;
  c.sync_every = 1000;
  c.auto_lr = false;
  const Hdet hdet(c);
  const auto s = hdet.init();
  const std::vector<double> h = {1.0, 3.0, 0.5};
  std::vector<std::vector<double>> x(5, std::vector<double>{1.0, -2.0, 0.7});
  std::vector<double> base = {1.0, -2.0, 0.7};
  for (int step = 0; step < 50; ++step) {
    const double eta = 0.1 * (1.0 - step / 60.0);  // a decaying base schedule
    for (size_t d = 0; d < 3; ++d) {
      double mean = 0;
      for (const auto& xr : x) mean += xr[d] / 5.0;
      for (size_t r = 0; r < 5; ++r) x[r][d] -= hdet.replica_value(s, static_cast<int64_t>(r), eta) * h[d] * mean;
      base[d] -= eta * h[d] * base[d];
    }
  }
  for (size_t d = 0; d < 3; ++d) {
    double mean = 0;
    for (const auto& xr : x) mean += xr[d] / 5.0;
    EXPECT_NEAR(mean, base[d], 1e-12 * (1 + std::fabs(base[d])));
    EXPECT_GT(std::fabs(x[0][d] - x[4][d]), 1e-6) << "the replicas themselves differ";
  }
}

TEST(Hdet, BadConfigNamesTheKey) {
  HdetConfig c;
  c.alpha = 1.5;
  try {
    Hdet h(c);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hdet.alpha"), std::string::npos);
  }
  c = HdetConfig();
  c.sync_every = 0;
  EXPECT_THROW(Hdet{c}, std::invalid_argument);
  EXPECT_THROW(Hdet(HdetConfig()).observe(Hdet(HdetConfig()).init(), {1.0}), std::invalid_argument);
  c = HdetConfig();
  c.replicas = 1'000'000'000;  // built 8 GB of spread, then shuffled for minutes
  try {
    Hdet h(c);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "hdet.replicas must be in [1, 16777216] (got 1000000000)");
  }
}

// A state of another replica count, or a damaged or hand-edited one (the Python HDET's state_dict is plain data),
// indexed past the replicas in observe: a segmentation fault. Each field is checked and named.
TEST(Hdet, AStateThatIsNotThisControllersIsRefusedNamingTheField) {
  HdetConfig c;
  c.replicas = 3;
  const Hdet h(c);
  const HdetState good = h.observe(h.init(), {1.0, 2.0, 3.0});
  EXPECT_NO_THROW(h.check_state(good));
  const auto error_of = [&](const std::function<void(HdetState&)>& damage) {
    HdetState s = good;
    damage(s);
    std::string checked = "no error", observed = "no error", synced = "no error", valued = "no error";
    const auto message = [](const std::function<void()>& call, std::string& into) {
      try {
        call();
      } catch (const std::invalid_argument& e) {
        into = e.what();
      }
    };
    message([&] { h.check_state(s); }, checked);
    message([&] { h.observe(s, {1.0, 2.0, 3.0}); }, observed);
    message([&] { h.sync(s, 1e-3); }, synced);
    EXPECT_EQ(observed, checked);
    EXPECT_EQ(synced, checked);
    return checked;
  };
  EXPECT_EQ(error_of([](HdetState& s) { s.window_loss = {1.0}; }), "hdet state: window_loss holds 1 values for 3 replicas");
  EXPECT_EQ(error_of([](HdetState& s) { s.permutation = {0, 1}; }),
            "hdet state: permutation [0, 1] is not an ordering of the 3 replicas (each of 0..2 once)");
  EXPECT_EQ(error_of([](HdetState& s) { s.permutation = {0, 3, 1}; }),
            "hdet state: permutation [0, 3, 1] is not an ordering of the 3 replicas (each of 0..2 once)");
  EXPECT_EQ(error_of([](HdetState& s) { s.permutation = {2, 0, 2}; }),
            "hdet state: permutation [2, 0, 2] is not an ordering of the 3 replicas (each of 0..2 once)");
  EXPECT_EQ(error_of([](HdetState& s) { s.window_steps = 5; }),
            "hdet state: step 1, syncs 0 and window_steps 5 must be counts >= 0, window_steps at most step");
  EXPECT_EQ(error_of([](HdetState& s) { s.syncs = -1; }),
            "hdet state: step 1, syncs -1 and window_steps 1 must be counts >= 0, window_steps at most step");
  EXPECT_EQ(error_of([](HdetState& s) { s.scale = 0; }), "hdet state: scale must be a finite number > 0 (got 0)");
  EXPECT_EQ(error_of([](HdetState& s) { s.velocity = NAN; }), "hdet state: velocity must be finite (got nan)");
  // replica_value reads one entry a step: an entry past the replicas is refused with the whole state's check.
  HdetState s = good;
  s.permutation = {0, 7, 1};
  try {
    h.replica_value(s, 1, 1e-3);
    FAIL() << "read rho[7] of 3";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "hdet state: permutation [0, 7, 1] is not an ordering of the 3 replicas (each of 0..2 once)");
  }
}

}  // namespace
}  // namespace lrkit::controllers
