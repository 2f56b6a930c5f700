// Family facts from ALGORITHMS.md sections 1-5 that golden files cannot cover.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/schedules/decay_shape.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/spec.hpp"

namespace lrkit::schedules {
namespace {

constexpr double kPi = 3.14159265358979323846;

// The message a refused spec gives (empty when it is accepted).
std::string refusal(const std::string& spec, int64_t total) {
  try {
    parse_schedule(spec, total);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

TEST(Uba, PhiTwoIsExactlyCosineIncludingWarmup) {
  const auto uba = parse_schedule("uba(peak=1e-3, phi=2, floor=1e-5, warmup=50)", 1000);
  const auto cos = parse_schedule("cosine(peak=1e-3, floor=1e-5, warmup=50)", 1000);
  for (int64_t t = 0; t <= 1000; ++t) EXPECT_NEAR(uba(t), cos(t), 1e-15) << t;
}

TEST(Uba, SmallPhiHoldsThePeakLargePhiDecaysEarly) {
  const auto lo = parse_schedule("uba(peak=1, phi=0.1)", 1000);
  const auto cos = parse_schedule("cosine(peak=1)", 1000);
  const auto hi = parse_schedule("uba(peak=1, phi=5)", 1000);
  for (int64_t t : {250, 500, 750, 900}) {
    EXPECT_GT(lo(t), cos(t)) << t;
    EXPECT_LT(hi(t), cos(t)) << t;
  }
  EXPECT_GT(lo(750), 0.75);  // WSD-like: still high at three quarters
  EXPECT_EQ(lo(1000), 0.0);
}

TEST(Uba, ALargePhiStartsAtThePeakAndFollowsTheFormulaInLongDouble) {
  for (double phi : {3.0, 1e4, 1e12, 1e20, 1e300}) {
    const auto s = parse_schedule("uba(peak=1, floor=1e-4, phi=" + format_number(phi) + ")", 1000);
    EXPECT_EQ(s(0), 1.0) << phi;
    EXPECT_EQ(s(1000), 1e-4) << phi;
    for (int64_t t = 1; t < 1000; ++t) {
      // The paper's form, in 64-bit-mantissa arithmetic where phi < 1e12 leaves it well conditioned.
      const long double u = 1.0L + std::cos(static_cast<long double>(kPi) * t / 1000.0L);
      const long double reference = 1e-4L + (1.0L - 1e-4L) * 2.0L * u / (2.0L * phi + (2.0L - phi) * u);
      ASSERT_LE(s(t), s(t - 1)) << phi << " at " << t;
      if (phi < 1e12) {
        ASSERT_NEAR(s(t), static_cast<double>(reference), 1e-15) << phi << " at " << t;  // peak = 1
      }
    }
  }
}

TEST(Uba, InverseFollowsChebyshevStepSizesWhenPhiIsTwoKappa) {
  // Quadratic with curvature in [mu, L]: 1/lr must run through the Chebyshev
  // nodes (L + mu)/2 - (L - mu)/2 cos(pi s), from mu up to L.
  const double mu = 0.5, L = 20.0, kappa = L / mu;
  const auto s = parse_schedule("uba(peak=" + format_number(1 / mu) + ", floor=" + format_number(1 / L) +
                                    ", phi=" + format_number(2 * kappa) + ")",
                                400);
  for (int64_t t = 0; t <= 400; ++t) {
    const double progress = static_cast<double>(t) / 400.0;
    const double node = (L + mu) / 2 - (L - mu) / 2 * std::cos(kPi * progress);
    EXPECT_NEAR(1.0 / s(t), node, 1e-9 * node) << t;
  }
}

TEST(DecayShapes, MatchTheTableAtAQuarterAndThreeQuarters) {
  const double peak = 2.0, floor = 0.5;
  for (double x : {0.25, 0.75}) {
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Linear, x, peak, floor, 1), floor + 1.5 * (1 - x));
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Cosine, x, peak, floor, 1), floor + 1.5 * (1 + std::cos(kPi * x)) / 2);
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::OneMinusSqrt, x, peak, floor, 1), floor + 1.5 * (1 - std::sqrt(x)));
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Square, x, peak, floor, 1), floor + 1.5 * (1 - x * x));
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Exp, x, peak, floor, 1), floor + 1.5 * (2 * std::pow(0.5, x) - 1));
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Polynomial, x, peak, floor, 3), floor + 1.5 * std::pow(1 - x, 3));
    EXPECT_DOUBLE_EQ(decay_value(DecayShape::Inverse, x, peak, floor, 1), peak / (1 + (peak / floor - 1) * x));
    EXPECT_NEAR(decay_value(DecayShape::Geometric, x, peak, floor, 1), peak * std::pow(floor / peak, x), 1e-15);
  }
  for (auto shape : {DecayShape::Linear, DecayShape::Cosine, DecayShape::OneMinusSqrt, DecayShape::Square,
                     DecayShape::Exp, DecayShape::Inverse, DecayShape::Polynomial, DecayShape::Geometric}) {
    EXPECT_NEAR(decay_value(shape, 0, peak, floor, 2), peak, 1e-15) << decay_shape_name(shape);
    EXPECT_NEAR(decay_value(shape, 1, peak, floor, 2), floor, 1e-15) << decay_shape_name(shape);
  }
}

TEST(Wsd, PlateauThenEveryShapeEndsAtTheFloor) {
  for (const char* shape : {"linear", "cosine", "1-sqrt", "square", "exp", "inverse", "polynomial", "geometric"}) {
    const auto s = parse_schedule(std::string("wsd(peak=1e-3, floor=1e-5, warmup=100, decay=300, shape=") + shape +
                                      ", power=2)", 2000);
    EXPECT_DOUBLE_EQ(s(50), 5e-4) << shape;
    EXPECT_DOUBLE_EQ(s(100), 1e-3) << shape;
    EXPECT_DOUBLE_EQ(s(1700), 1e-3) << shape;
    EXPECT_LT(s(1701), 1e-3) << shape;
    EXPECT_NEAR(s(2000), 1e-5, 1e-18) << shape;
  }
  const auto d = parse_schedule("wsd(peak=1)", 1000);  // defaults: decay 20 %, 1-sqrt, floor 0
  EXPECT_DOUBLE_EQ(d(800), 1.0);
  EXPECT_DOUBLE_EQ(d(900), 1 - std::sqrt(0.5));
}

TEST(InvSqrt, WarmupThenInverseSquareRoot) {
  const auto s = parse_schedule("invsqrt(peak=1, warmup=100)", std::nullopt);
  EXPECT_FALSE(s.bounded());
  EXPECT_DOUBLE_EQ(s(50), 0.5);
  EXPECT_DOUBLE_EQ(s(100), 1.0);
  EXPECT_DOUBLE_EQ(s(400), 0.5);
  EXPECT_DOUBLE_EQ(s(10000), 0.1);
  // A timescale past the warmup holds the peak until it (T5); shifted, the decay starts at the warmup's end, as
  // though `timescale` steps into it (big_vision, Hugging Face); with timescale = warmup the two are one schedule.
  const auto held = parse_schedule("invsqrt(peak=1, warmup=100, timescale=400)");
  const auto shifted = parse_schedule("invsqrt(peak=1, warmup=100, timescale=400, shift=true)");
  EXPECT_DOUBLE_EQ(held(399), 1.0);
  EXPECT_DOUBLE_EQ(held(1600), 0.5);
  EXPECT_DOUBLE_EQ(shifted(100), 1.0);
  EXPECT_DOUBLE_EQ(shifted(1300), 0.5);  // sqrt(400 / (1300 - 100 + 400))
  const auto shifted_at_warmup = parse_schedule("invsqrt(peak=1, warmup=100, shift=true)");
  for (int64_t t : {0, 50, 100, 400, 10000}) EXPECT_EQ(shifted_at_warmup(t), s(t)) << "step " << t;
}

TEST(Infinite, CooldownConstantAndGeometricAnneal) {
  const auto s = parse_schedule("infinite(peak=1, const=50%, floor=5%, warmup=10, cooldown=90, anneal=100)", 1000);
  EXPECT_DOUBLE_EQ(s(5), 0.5);
  EXPECT_DOUBLE_EQ(s(10), 1.0);
  EXPECT_NEAR(s(55), 0.75, 1e-12);  // half-way through a cosine cooldown
  EXPECT_DOUBLE_EQ(s(100), 0.5);
  EXPECT_DOUBLE_EQ(s(899), 0.5);
  EXPECT_NEAR(s(950), 0.5 * std::pow(0.1, 0.5), 1e-12);
  EXPECT_NEAR(s(1000), 0.05, 1e-15);
}

TEST(Rewarm, GuptaDefaultsWarmupOnePercentCosineToTenPercent) {
  const auto s = parse_schedule("rewarm(peak=3e-4)", 10000);
  EXPECT_DOUBLE_EQ(s(0), 0.0);
  EXPECT_DOUBLE_EQ(s(50), 1.5e-4);
  EXPECT_DOUBLE_EQ(s(100), 3e-4);
  EXPECT_NEAR(s(10000), 3e-5, 1e-18);
}

TEST(Warmups, LinearCosineAndExpReachThePeak) {
  const auto lin = parse_schedule("constant(peak=1, warmup=100, warmup_init=0.2)", 1000);
  EXPECT_DOUBLE_EQ(lin(50), 0.6);
  const auto cos = parse_schedule("constant(peak=1, warmup=100, warmup_shape=cosine)", 1000);
  EXPECT_NEAR(cos(50), 0.5, 1e-15);
  const auto ex = parse_schedule("constant(peak=1, warmup=100, warmup_shape=exp, warmup_init=0.01)", 1000);
  EXPECT_NEAR(ex(50), 0.1, 1e-15);
  EXPECT_DOUBLE_EQ(ex(100), 1.0);
  EXPECT_THROW(parse_schedule("constant(peak=1, warmup=100, warmup_shape=exp)", 1000), SpecError);
  const auto root = parse_schedule("constant(peak=1, warmup=100, warmup_shape=1-sqrt, warmup_init=0.2)", 1000);
  EXPECT_DOUBLE_EQ(root(75), 0.2 + 0.8 * 0.5);  // 1 - sqrt(1 - 3/4)
  EXPECT_DOUBLE_EQ(root(100), 1.0);
}

// Hugging Face's num_cycles: (1 + cos(2 pi c s)) / 2 between floor and peak (its golden cases hold its values).
TEST(CosineCycles, WaveBetweenPeakAndFloorWithAFallAndARisePerCycle) {
  const auto one = parse_schedule("cosine(peak=1, floor=0.1, cycles=1)", 100);
  EXPECT_EQ(one(0), 1.0);
  EXPECT_EQ(one(50), 0.1);  // the trough, exactly
  EXPECT_NEAR(one(25), 0.55, 1e-15);
  EXPECT_NEAR(one(75), 0.55, 1e-15);
  EXPECT_NEAR(one(100), 1.0, 1e-15);  // back at the peak
  auto phases = one.phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].kind, PhaseKind::Decay);
  EXPECT_EQ(phases[0].end, 50);
  EXPECT_EQ(phases[1].kind, PhaseKind::Ramp);
  EXPECT_EQ(phases[1].end, 100);
  // 1.75 waves after a warmup of 20: troughs at 20 + 80 * (1/3.5, 3/3.5), crests at 20 + 80 * 2/3.5; ends at 0.55.
  const auto uneven = parse_schedule("cosine(peak=1, floor=0.1, cycles=1.75, warmup=20)", 100);
  phases = uneven.phases();
  ASSERT_EQ(phases.size(), 5u);
  const int64_t turns[] = {20, 43, 66, 89};
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(phases[i + 1].begin, turns[i]) << "phase " << i + 1;
  EXPECT_EQ(phases[4].end, 100);
  EXPECT_NEAR(uneven(100), 0.55, 1e-12);
  // cycles = 0.5 is the half cosine every other family decays by, bit for bit.
  const auto half = parse_schedule("cosine(peak=1, floor=0.1, cycles=0.5)", 100);
  const auto plain = parse_schedule("cosine(peak=1, floor=0.1)", 100);
  for (int64_t t = 0; t <= 100; ++t) EXPECT_EQ(half(t), plain(t)) << "step " << t;
  // A wave longer than any run is one decay (its half wave's length once overflowed the phase list's arithmetic).
  for (const char* tiny : {"cosine(peak=1, cycles=1e-300)", "cosine(peak=1, cycles=1e-320)"})
    EXPECT_EQ(parse_schedule(tiny, 300).phases().size(), 1u) << tiny;
  EXPECT_NE(refusal("cosine(peak=1, cycles=0)", 100).find("'cycles' must be > 0"), std::string::npos);
  EXPECT_NE(refusal("cosine(peak=1, cycles=2e9)", 100).find("'cycles' must be at most 1e9"), std::string::npos);
}

TEST(Combinators, JoinHandsEachPieceItsOwnSteps) {
  const auto s = parse_schedule("join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])", 1000);
  EXPECT_DOUBLE_EQ(s(100), 5e-4);
  EXPECT_DOUBLE_EQ(s(200), 1e-3);  // cosine at its own step 0
  EXPECT_NEAR(s(600), 1e-5 + (1e-3 - 1e-5) / 2, 1e-15);
  EXPECT_DOUBLE_EQ(s(1000), 1e-5);
  const auto pct = parse_schedule("join(constant(1), constant(2), constant(3), at=[10%, 50%])", 1000);
  EXPECT_EQ(pct(99), 1);
  EXPECT_EQ(pct(100), 2);
  EXPECT_EQ(pct(500), 3);
}

TEST(Combinators, WarmupFloorAndScaleWrapAnySchedule) {
  const auto w = parse_schedule("warmup(cosine(1e-3), length=100)", 1100);
  EXPECT_DOUBLE_EQ(w(50), 5e-4);
  EXPECT_DOUBLE_EQ(w(100), 1e-3);
  EXPECT_NEAR(w(600), 5e-4, 1e-15);  // the cosine runs over the remaining 1000 steps
  const auto f = parse_schedule("floor(cosine(1e-3), min=1e-4)", 100);
  EXPECT_DOUBLE_EQ(f(100), 1e-4);
  EXPECT_DOUBLE_EQ(f(0), 1e-3);
  const auto sc = parse_schedule("scale(wsd(peak=1), by=0.5)", 100);
  EXPECT_DOUBLE_EQ(sc(10), 0.5);
  EXPECT_EQ(sc.to_spec(), "scale(wsd(peak=1), by=0.5)");
}

// timm's warmup_prefix=False: the ramp (to the schedule's first value) takes the place of its first steps.
TEST(Combinators, AWarmupThatIsNoPrefixCoversTheSchedulesFirstSteps) {
  const auto over = parse_schedule("warmup(cosine(peak=1, floor=0.1), length=3, init=0.01, prefix=false)", 10);
  const auto plain = parse_schedule("cosine(peak=1, floor=0.1)", 10);
  EXPECT_EQ(over.total(), 10);
  EXPECT_DOUBLE_EQ(over(0), 0.01);
  EXPECT_DOUBLE_EQ(over(2), 0.01 + 0.99 * 2.0 / 3.0);  // toward the cosine's first value, 1
  for (int64_t t = 3; t <= 10; ++t) EXPECT_EQ(over(t), plain(t)) << "step " << t;  // the cosine's own steps
  auto phases = over.phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].kind, PhaseKind::Warmup);
  EXPECT_EQ(phases[1].begin, 3);
  EXPECT_TRUE(phases[1].jumps_at_begin);  // the ramp ends at 1, the cosine is lower by step 3
  // Phases that the ramp covers whole are gone; a constant schedule has no jump.
  phases = parse_schedule("warmup(wsd(peak=1, decay=5), length=7, prefix=false)", 10).phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[1].kind, PhaseKind::Decay);
  EXPECT_EQ(phases[1].begin, 7);
  EXPECT_FALSE(parse_schedule("warmup(constant(1), length=3, prefix=false)", 10).phases()[1].jumps_at_begin);
  // A prefix delays the schedule, as before.
  const auto prefix = parse_schedule("warmup(cosine(peak=1, floor=0.1), length=3, init=0.01)", 10);
  EXPECT_EQ(prefix(3), 1.0);
  EXPECT_NE(refusal("warmup(cosine(peak=1, total=5), length=5, prefix=false)", 10)
                .find("a warmup that is not a prefix must be shorter than its schedule (5 steps), got 5"),
            std::string::npos);
}

TEST(Restarts, PeakDecayShrinksEachCycle) {
  const auto s = parse_schedule("restarts(peak=1, period=10, mult=2, peak_decay=0.5)", 100);
  EXPECT_DOUBLE_EQ(s(0), 1.0);
  EXPECT_DOUBLE_EQ(s(10), 0.5);
  EXPECT_DOUBLE_EQ(s(30), 0.25);
  const auto phases = s.phases();
  ASSERT_GE(phases.size(), 3u);
  EXPECT_EQ(phases[1].begin, 10);
  EXPECT_TRUE(phases[1].jumps_at_begin);
}

// Hugging Face's cosine_with_restarts: n equal cycles over the run after the warmup, whole steps or not.
TEST(Restarts, CyclesSplitTheRunIntoEqualCyclesThatEndAtTheFloor) {
  const auto s = parse_schedule("restarts(peak=1, cycles=3, peak_decay=0.5)", 10);
  EXPECT_EQ(s(0), 1.0);
  EXPECT_NEAR(s(1), 0.5 * (1 + std::cos(kPi * 0.3)), 1e-15);
  EXPECT_NEAR(s(4), 0.5 * 0.5 * (1 + std::cos(kPi * 0.2)), 1e-15);  // the second cycle began at 10/3
  EXPECT_NEAR(s(7), 0.25 * 0.5 * (1 + std::cos(kPi * 0.1)), 1e-15);
  EXPECT_EQ(s(10), 0.0);  // the last cycle ends at the floor; no restart at the run's end
  const auto phases = s.phases();
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[1].begin, 4);
  EXPECT_EQ(phases[2].begin, 7);
  EXPECT_EQ(phases[2].end, 10);
  EXPECT_TRUE(phases[2].jumps_at_begin);
  // Cycles that divide the run are period's cycles.
  const auto even = parse_schedule("restarts(peak=1, floor=0.01, cycles=4, warmup=20)", 420);
  const auto by_period = parse_schedule("restarts(peak=1, floor=0.01, period=100, warmup=20)", 420);
  for (int64_t t = 0; t < 420; ++t) EXPECT_NEAR(even(t), by_period(t), 1e-15) << "step " << t;
  EXPECT_NE(refusal("restarts(peak=1, cycles=3, period=5)", 100).find("not both"), std::string::npos);
  EXPECT_NE(refusal("restarts(peak=1, cycles=3, mult=2)", 100).find("'mult' grows cycles"), std::string::npos);
  EXPECT_NE(refusal("restarts(peak=1, cycles=2.5)", 100)
                .find("whole number from 1 to the steps after the warmup (100)"),
            std::string::npos);
  EXPECT_NE(refusal("restarts(peak=1, cycles=11, warmup=90)", 100).find("(10), got 11"), std::string::npos);
  EXPECT_NE(refusal("restarts(peak=1)", 100).find("or 'cycles'"), std::string::npos);
}

TEST(Triangular, UpAndDownBetweenFloorAndPeakWithTheSwingHalvedOrDecayedPerMode) {
  // Cycles of 4 steps up and 2 down, from 1 to 3: PyTorch CyclicLR(base_lr=1, max_lr=3, step_size_up=4,
  // step_size_down=2). The golden cases hold PyTorch's own values; these are the formula's.
  const auto s = parse_schedule("triangular(peak=3, floor=1, up=4, down=2)");
  EXPECT_EQ(s.total(), kUnbounded);
  const std::vector<std::pair<int64_t, double>> expected = {{0, 1}, {2, 2}, {4, 3}, {5, 2}, {6, 1}, {10, 3}};
  for (const auto& [step, rate] : expected)
    EXPECT_NEAR(s(step), rate, 1e-12) << "step " << step;
  const auto halving = parse_schedule("triangular(peak=3, floor=1, up=4, down=2, mode=triangular2)");
  EXPECT_NEAR(halving(4), 3.0, 1e-12);
  EXPECT_NEAR(halving(10), 2.0, 1e-12);   // the second cycle swings half as high
  EXPECT_NEAR(halving(16), 1.5, 1e-12);   // the third a quarter
  const auto decaying = parse_schedule("triangular(peak=3, floor=1, up=4, mode=exp_range, gamma=0.9)");
  EXPECT_NEAR(decaying(4), 1.0 + 2.0 * std::pow(0.9, 4), 1e-12);
  EXPECT_NEAR(decaying(12), 1.0 + 2.0 * std::pow(0.9, 12), 1e-12);
  // A ramp up and a decay down per cycle, cut where the run ends; a warmup ends where the first cycle starts.
  const auto phases = parse_schedule("triangular(peak=3, floor=1, up=4, down=2, warmup=3)", 14).phases();
  ASSERT_EQ(phases.size(), 5u);
  EXPECT_EQ(phases[0].kind, PhaseKind::Warmup);
  EXPECT_EQ(phases[0].end, 3);
  EXPECT_EQ(phases[1].kind, PhaseKind::Ramp);
  EXPECT_EQ(phases[2].kind, PhaseKind::Decay);
  EXPECT_EQ(phases[2].begin, 7);
  EXPECT_EQ(phases[3].begin, 9);
  EXPECT_EQ(phases[4].begin, 13);
  EXPECT_EQ(phases[4].end, 14);
  // gamma only where it scales something, and never growing; up is required (PyTorch's default 2000 is a guess).
  EXPECT_THROW(parse_schedule("triangular(peak=3, up=4, gamma=0.9)"), SpecError);
  EXPECT_THROW(parse_schedule("triangular(peak=3, up=4, mode=exp_range, gamma=1.1)"), SpecError);
  EXPECT_THROW(parse_schedule("triangular(peak=3)"), SpecError);
  EXPECT_THROW(parse_schedule("triangular(peak=3, up=4, down=0)"), SpecError);
}

// The momentum OneCycleLR and CyclicLR cycle (their golden cases hold PyTorch's values): max where the rate is lowest,
// base at its peak; a warmup holds the cycle's first value; a schedule that cycles none, or wraps one, has none.
TEST(CycledMomentum, MirrorsTheRateInOneCycleAndTriangularOnly) {
  const auto triangular = parse_schedule("triangular(peak=3, floor=1, up=4, down=2, warmup=3)");
  EXPECT_EQ(triangular.cycled_momentum(0, 0.8, 0.9), 0.9);
  EXPECT_EQ(triangular.cycled_momentum(3, 0.8, 0.9), 0.9);                 // the cycle starts at the floor
  EXPECT_NEAR(*triangular.cycled_momentum(5, 0.8, 0.9), 0.85, 1e-15);     // halfway up
  EXPECT_NEAR(*triangular.cycled_momentum(7, 0.8, 0.9), 0.8, 1e-15);      // the peak
  const auto covered = parse_schedule("warmup(triangular(peak=3, floor=1, up=4, down=2), length=3, prefix=false)");
  EXPECT_EQ(covered.cycled_momentum(1, 0.8, 0.9), 0.9);                   // the cycle's first value while covered
  EXPECT_NEAR(*covered.cycled_momentum(4, 0.8, 0.9), 0.8, 1e-15);         // then the cycle's own step: its peak
  const auto one_cycle = parse_schedule("onecycle(peak=1)", 100);
  EXPECT_EQ(one_cycle.cycled_momentum(0, 0.85, 0.95), 0.95);
  EXPECT_EQ(one_cycle.cycled_momentum(29, 0.85, 0.95), 0.85);              // the peak, at pct_start * T - 1
  EXPECT_EQ(one_cycle.cycled_momentum(99, 0.85, 0.95), 0.95);
  EXPECT_EQ(one_cycle.cycled_momentum(100, 0.85, 0.95), 0.95);             // held past the last update, as the rate
  EXPECT_FALSE(parse_schedule("cosine(peak=1)", 100).cycled_momentum(5, 0.85, 0.95));
  EXPECT_FALSE(parse_schedule("scale(onecycle(peak=1), by=2)", 100).cycled_momentum(5, 0.85, 0.95));
  EXPECT_THROW(one_cycle.cycled_momentum(-1, 0.85, 0.95), std::invalid_argument);
}

TEST(Cyclic, CosineToTheFloorByEachBudgetWithLinearRewarms) {
  // Wen et al.'s baseline: budgets 40/60/80, warmup 10, rewarm 5, floor 10 %.
  const auto s = parse_schedule("cyclic(peak=2, budgets=[40, 60, 80], rewarm=5, warmup=10)");
  EXPECT_EQ(s.total(), 80);
  EXPECT_EQ(s.checkpoints(), (std::vector<int64_t>{40, 60, 80}));
  EXPECT_DOUBLE_EQ(s(10), 2.0);
  EXPECT_NEAR(s(25), 0.2 + 1.8 * (1 + std::cos(kPi * 15.0 / 30.0)) / 2, 1e-12);  // halfway down the first cosine
  EXPECT_DOUBLE_EQ(s(40), 0.2);                                                   // the rewarm starts at the floor
  EXPECT_NEAR(s(42), 0.2 + 1.8 * 2.0 / 5.0, 1e-12);                               // linear
  EXPECT_DOUBLE_EQ(s(45), 2.0);
  EXPECT_DOUBLE_EQ(s(80), 0.2);
  EXPECT_NEAR(s(59), 0.2 + 1.8 * (1 + std::cos(kPi * 14.0 / 15.0)) / 2, 1e-12);  // last update of a 15-step cosine
  EXPECT_THROW(parse_schedule("cyclic(peak=1, budgets=[40, 60], rewarm=20)"), SpecError);
  EXPECT_THROW(parse_schedule("cyclic(peak=1, budgets=[40, 30])"), SpecError);
  EXPECT_THROW(parse_schedule("cyclic(peak=1, budgets=[40, 60], warmup=40)"), SpecError);
}

TEST(Schedule, ClampsPastTheEndAndRefusesNegativeSteps) {
  const auto s = parse_schedule("cosine(peak=1, floor=0.1)", 100);
  EXPECT_DOUBLE_EQ(s(100), 0.1);
  EXPECT_DOUBLE_EQ(s(1000000), 0.1);
  EXPECT_THROW(s(-1), std::invalid_argument);
  EXPECT_THROW(s.at(std::nan("")), std::invalid_argument);
}

TEST(Schedule, OpenEndedFamiliesNeedNoTotal) {
  for (const char* spec : {"constant(1)", "step(1, every=10)", "multistep(1, milestones=[5, 9])",
                           "exponential(1, gamma=0.9)", "invsqrt(1, warmup=10)"}) {
    const auto s = parse_schedule(spec, std::nullopt);
    EXPECT_FALSE(s.bounded()) << spec;
    EXPECT_TRUE(std::isfinite(s(1000000))) << spec;
  }
}

}  // namespace
}  // namespace lrkit::schedules
