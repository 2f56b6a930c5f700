// fit_checked_series: the spec a logged series follows, found without one.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_fit.hpp"
#include "golden_cases.hpp"

namespace lrkit::schedules {
namespace {

struct Logged {
  std::vector<int64_t> steps;
  std::vector<double> values;
};

// The rates of `spec` over `total` steps at steps 0, every, 2 every, ... up to `last` (default: total - 1).
Logged logged(const std::string& spec, int64_t total, int64_t every = 1, std::optional<int64_t> last = std::nullopt) {
  const Schedule s = parse_schedule(spec, total);
  Logged out;
  for (int64_t t = 0; t <= last.value_or(total - 1); t += every) {
    out.steps.push_back(t);
    out.values.push_back(s(t));
  }
  return out;
}

SeriesFit fit(const Logged& l, std::optional<int64_t> total = std::nullopt, double tolerance = 1e-6) {
  return fit_checked_series(l.steps, l.values, total, tolerance);
}

// Each family's log, of every step and of every 10th, gives back its spec and length: the peak and warmup read from
// the log, one more number (a floor, a decay, a power, a factor) found by the search --compare makes. (A log of every
// 10th step holds each warmup's last step here; onecycle peaks at step 299, which it misses: see the next test.)
TEST(SeriesFit, EachFamilysLogGivesBackItsSpec) {
  const char* specs[] = {
      "constant(peak=0.0003, warmup=10)",
      "cosine(peak=0.0003, warmup=100)",
      "cosine(peak=0.0003, floor=1e-05, warmup=100)",
      "cosine(peak=0.1, floor=10%)",
      "linear(peak=0.001, warmup=20)",
      "wsd(peak=0.0003, decay=20%, shape=1-sqrt, warmup=100)",
      "wsd(peak=0.001, decay=10%, shape=linear, warmup=50)",
      "polynomial(peak=0.01, power=3)",
      "invsqrt(peak=0.001, warmup=100)",
      "exponential(peak=0.1, gamma=0.995)",
      "onecycle(peak=0.01)",
      "step(peak=0.1, every=30, gamma=0.5, warmup=10)",
      // MultiStepLR: every drop a milestone.
      "multistep(peak=0.1, milestones=[300, 600, 800], gamma=0.2, warmup=10)",
      "uba(peak=0.001, phi=1.5, warmup=20)",
      // Hugging Face's and big_vision's inverse square root, its timescale found.
      "invsqrt(peak=0.001, timescale=400, shift=true, warmup=100)",
      // Where the rate climbs again: CosineAnnealingWarmRestarts, timm's cycle decay, Hugging Face's equal cycles and
      // its cosine of one whole cycle, CyclicLR's three modes.
      "restarts(peak=0.01, period=100, mult=2, floor=1%)",
      "restarts(peak=0.01, period=100, peak_decay=0.5, floor=1%)",
      "restarts(peak=0.0003, warmup=100, cycles=7)",
      "cosine(peak=0.0003, warmup=100, cycles=1)",
      "triangular(peak=0.1, floor=0.01, up=20, down=30)",
      "triangular(peak=0.1, floor=0.001, up=20, down=30, mode=triangular2)",
      "triangular(peak=0.05, floor=0.005, up=20, mode=exp_range, gamma=0.999)",
      // Two numbers beside the peak and the warmup, one read from the log: a warmup from above 0 (step 0's rate, or
      // where the warmup's line meets it), a decay from the last row at the peak, a floor held from the decay's end on
      // (Megatron's --lr-decay-iters, Hugging Face's num_stable_steps).
      "wsd(peak=0.001, floor=10%, decay=20%, shape=linear, warmup=100, warmup_init=0.0001)",
      "wsd(peak=0.0003, floor=10%, decay=200, shape=cosine, total=800, warmup=100)",
      // A warmup that is no line (Hugging Face's warmup_type), a decay of Megatron-LM's exp shape.
      "wsd(peak=0.001, floor=10%, decay=20%, shape=exp, warmup=100, warmup_init=0.0001, warmup_shape=cosine)",
  };
  for (const char* spec : specs) {
    for (const int64_t every : {1, 10}) {
      if (every == 10 && std::string(spec).find("onecycle") == 0) continue;
      const auto f = fit(logged(spec, 1000, every), 1000);
      EXPECT_TRUE(f.fits) << spec << " every " << every << ": " << f.spec;
      EXPECT_EQ(f.total, 1000) << spec;
      // The spec found gives every logged rate (the same spec, or one that cannot be told from it in these rows).
      EXPECT_TRUE(f.match.follows) << spec;
      if (every == 1) {
        EXPECT_EQ(f.spec, spec);
      }
    }
  }
}

// The rates of PyTorch's schedulers and of transcriptions of Hugging Face's, timm's and Megatron-LM's (the golden
// cases, make_golden.py), each logged at every step in float64 and at every 10th in float32: the fit finds a spec
// that gives every logged rate, except for the cases listed, which it cannot read (see each list).
TEST(SeriesFit, TheGoldenCasesAreFittedFromTheirRates) {
  // Every step: a peak the log never holds (OneCycleLR whose pct_start T - 1 is no whole step, timm's warmup laid over
  // the schedule's start), a warmup of no shape tried (ConstantLR's step), and joins of two families.
  const std::set<std::string> unfitted_dense = {
      "onecycle_linear_three_phase", "onecycle_short", "sequential_constant_exponential", "constant_lr",
      "megatron_inverse_square_root", "megatron_inverse_square_root_min_lr", "timm_cosine", "timm_cosine_cycles",
      "timm_poly"};
  // Every 10th step, also: a peak between two rows after a warmup that is no line (OneCycleLR's at step 299) or has
  // no row but step 0's (a warmup of 5 steps); Hugging Face's cosine_warmup_with_min_lr, whose floor (10 %) and length
  // (999: it counts steps from 1) are two numbers where the log holds no row of its end; and its cosine of 1.75 cycles
  // to a floor, whose first trough ten steps do not pin to one plain number of cycles. A ConstantLR of 5 steps and a
  // OneCycleLR of 17 fit in 5 and 2 rows.
  std::set<std::string> unfitted_sparse = unfitted_dense;
  for (const char* name : {"onecycle_default", "sequential_linear_cosine", "hf_cosine_warmup_with_min_lr",
                           "hf_cosine_warmup_with_min_lr_rate", "hf_cosine_with_min_lr_cycles"})
    unfitted_sparse.insert(name);
  unfitted_sparse.erase("constant_lr");
  unfitted_sparse.erase("onecycle_short");
  const auto cases = load_cases("schedules.tsv");
  ASSERT_GE(cases.size(), 59u);
  size_t fitted_dense = 0, fitted_sparse = 0;
  for (const auto& c : cases) {
    for (const int64_t every : {1, 10}) {
      SCOPED_TRACE(c.name + " every " + std::to_string(every) + ": " + c.spec);
      Logged l;
      for (int64_t t = 0; t < c.total; t += every) {
        l.steps.push_back(t);
        const double rate = c.values[static_cast<size_t>(t)];
        l.values.push_back(every == 1 ? rate : static_cast<double>(static_cast<float>(rate)));
      }
      const auto f = fit(l, c.total);
      const bool expected = !(every == 1 ? unfitted_dense : unfitted_sparse).count(c.name);
      EXPECT_EQ(f.fits, expected) << f.spec << " over " << f.total;
      if (!f.fits) continue;
      ++(every == 1 ? fitted_dense : fitted_sparse);
      // The case's own family where it is one (not a combinator), but for a LinearLR ramp, which is the same rows as a
      // constant after a linear warmup, and a 17-step OneCycleLR's two rows.
      const std::string family = c.spec.substr(0, c.spec.find('('));
      const bool combinator = family == "join" || family == "warmup" || family == "floor" || family == "scale";
      if (!combinator && c.name != "linear_ramp" && !(every == 10 && c.name == "onecycle_short")) {
        EXPECT_EQ(f.spec.substr(0, f.spec.find('(')), family) << f.spec;
      }
      // Each row, against the spec found, here rather than from the fit's own comparison.
      const Schedule found = parse_schedule(f.spec, f.total);
      for (size_t row = 0; row < l.steps.size(); ++row)
        ASSERT_LE(std::fabs(found(l.steps[row]) - l.values[row]), 1e-6 * std::fabs(l.values[row]))
            << f.spec << " at step " << l.steps[row];
    }
  }
  EXPECT_EQ(fitted_dense, cases.size() - unfitted_dense.size());
  EXPECT_EQ(fitted_sparse, cases.size() - unfitted_sparse.size());
}

// A log of every k-th step that misses the warmup's last step, where a decay follows at once, holds no row at the
// peak: the peak read is the plainest number between the largest rate and the warmup's line at that row, where the
// line reaches it at a whole step between the rows. A peak of more digits (0.000317 reaches the line's 0.0003 at no
// whole step) fits no spec; the closest comes back.
TEST(SeriesFit, APeakBetweenTwoRowsIsReadFromTheWarmupsLine) {
  auto f = fit(logged("cosine(peak=0.0003, warmup=100)", 1000, 7), 1000);
  EXPECT_TRUE(f.fits) << f.spec;
  EXPECT_EQ(f.spec, "cosine(peak=0.0003, warmup=100)");
  f = fit(logged("wsd(peak=0.0005, floor=10%, decay=500, shape=linear, warmup=469)", 1000, 50), 1000);
  EXPECT_TRUE(f.fits) << f.spec;
  EXPECT_EQ(f.spec, "wsd(peak=0.0005, floor=10%, decay=50%, shape=linear, warmup=469)");
  f = fit(logged("cosine(peak=0.000317, warmup=100)", 1000, 7), 1000);
  EXPECT_FALSE(f.fits) << f.spec;
  EXPECT_FALSE(f.match.follows);
}

// Without a length, the run's is taken as the last step + 1 (a log of steps 0..T-1) or the last step (a Trainer's,
// which logs step T at the end value); a log cut short before its end pins no length and is refused as a fit with
// the closest spec tried, and fits once its length is given.
TEST(SeriesFit, TheLengthIsTheLogsUnlessGiven) {
  const std::string spec = "cosine(peak=0.0003, floor=1e-05, warmup=100)";
  auto f = fit(logged(spec, 1000));
  EXPECT_EQ(f.spec, spec);
  EXPECT_EQ(f.total, 1000);
  f = fit(logged(spec, 1000, 10, 1000));  // steps 0, 10, ..., 1000
  EXPECT_EQ(f.spec, spec);
  EXPECT_EQ(f.total, 1000);
  const Logged cut = logged(spec, 1000, 1, 600);
  f = fit(cut);
  EXPECT_FALSE(f.fits) << f.spec;
  EXPECT_FALSE(f.spec.empty());
  EXPECT_FALSE(f.match.follows);
  f = fit(cut, 1000);
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.spec, spec);
}

// A float32 log's peak reads as written (0.0005, not 0.000500000023748), and the fit stays within the tolerance.
TEST(SeriesFit, AFloat32LogsPeakIsWrittenPlainly) {
  Logged l = logged("cosine(peak=5e-4, warmup=20)", 200, 10, 200);
  for (double& v : l.values) v = static_cast<double>(static_cast<float>(v));
  const auto f = fit(l);
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.spec, "cosine(peak=0.0005, warmup=20)");
  EXPECT_EQ(f.total, 200);
  EXPECT_LT(f.match.worst, 1e-7);
}

// A family it does not try (infinite) fits no spec: the closest one tried comes back with its first differing row. A
// log of zeros is constant(peak=0); one whose largest rate is below 0 has no spec at all (every family refuses that
// peak).
TEST(SeriesFit, ALogOfNoFamilyTriedGetsTheClosest) {
  const auto f = fit(logged("infinite(peak=1e-3, const=5e-4, warmup=20)", 1000), 1000);
  EXPECT_FALSE(f.fits);
  EXPECT_FALSE(f.match.follows);
  EXPECT_GT(f.match.worst, 1e-6);
  EXPECT_NE(f.spec.find("(peak=0.001"), std::string::npos) << f.spec;
  EXPECT_EQ(fit({{0, 1, 2}, {0.0, 0.0, 0.0}}).spec, "constant(peak=0)");
  EXPECT_TRUE(fit({{0, 1, 2}, {-1.0, -1.0, -1.0}}).spec.empty());
}

}  // namespace
}  // namespace lrkit::schedules
