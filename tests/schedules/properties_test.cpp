// Properties over many random valid specs: finite, within [low, peak],
// continuous at phase boundaries not marked as jumps, non-increasing inside
// decay phases, and to_spec() round-trips to the same values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/usable_rates.hpp"

namespace lrkit::schedules {
namespace {

struct RandomSpec {
  std::string spec;
  int64_t total;
  double low, high;       // every value must lie in [low, high]
  bool continuous;        // the family has no jumps at all
};

class SpecGenerator {
 public:
  explicit SpecGenerator(uint32_t seed) : rng_(seed) {}

  RandomSpec next() {
    const int64_t total = integer(20, 4000);
    const double peak = std::pow(10.0, uniform(-5, 0));
    const double floor = peak * (coin() ? 0.0 : uniform(0.001, 0.5));
    const int64_t warmup = coin() ? 0 : integer(1, total / 5);
    const std::string p = "peak=" + format_number(peak);
    const std::string f = ", floor=" + format_number(floor);
    const std::string w = warmup ? ", warmup=" + std::to_string(warmup) : "";
    const std::string shapes[] = {"linear", "cosine", "1-sqrt", "square", "exp", "inverse", "polynomial", "geometric"};
    const std::string shape = shapes[integer(0, 7)];
    const bool positive_floor = shape == "inverse" || shape == "geometric";
    const std::string sf = ", floor=" + format_number(positive_floor && floor == 0 ? peak * 0.01 : floor);
    const double low = warmup ? 0.0 : floor;  // a warmup starts from 0
    switch (integer(0, 14)) {
      case 0: return {"constant(" + p + w + ")", total, 0.0, peak, true};
      case 1: return {"linear(" + p + f + w + ")", total, low, peak, true};
      case 2: {
        const std::string cycles = coin() ? ", cycles=" + format_number(uniform(0.1, 30)) : "";
        return {"cosine(" + p + f + cycles + w + ")", total, low, peak, true};
      }
      case 3: return {"polynomial(" + p + f + ", power=" + format_number(uniform(0.3, 4)) + w + ")", total, low, peak, true};
      case 4: {  // phi up to 1e20: a large phi once cancelled to a zero denominator (inf at step 0)
        const double phi = std::pow(10.0, coin() ? uniform(-1.5, 1.5) : uniform(1.5, 20));
        return {"uba(" + p + f + ", phi=" + format_number(phi) + w + ")", total, low, peak, true};
      }
      case 5: {
        const int64_t decay = integer(1, total - warmup);
        return {"wsd(" + p + sf + w + ", decay=" + std::to_string(decay) + ", shape=" + shape + ", power=2)", total, 0.0, peak, true};
      }
      case 6: {
        if (coin()) return {"rewarm(" + p + w + ")", total, 0.0, peak, true};
        // A warmup over the first steps of a decay: it may jump where the decay takes over.
        return {"warmup(cosine(" + p + f + "), length=" + std::to_string(integer(1, total - 1)) + ", prefix=false)",
                total, 0.0, peak, false};
      }
      case 7: {
        const int64_t b1 = integer(10, 500), b2 = b1 + integer(10, 500), b3 = b2 + integer(10, 1000);
        return {"wsds(" + p + sf + ", budgets=[" + std::to_string(b1) + ", " + std::to_string(b2) + ", " +
                    std::to_string(b3) + "], decay=" + std::to_string(integer(5, 20)) + "%, shape=" + shape + ")",
                0, 0.0, peak, false};
      }
      case 8: {
        const double c = uniform(0.1, 0.9);
        return {"infinite(" + p + ", const=" + format_number(c * 100) + "%, floor=" + format_number(c * 10) +
                    "%, cooldown=10%, anneal=10%" + w + ")",
                total, 0.0, peak, true};
      }
      case 9: return {"step(" + p + ", every=" + std::to_string(integer(1, 300)) + ", gamma=" + format_number(uniform(0.1, 1)) + w + ")", total, 0.0, peak, false};
      case 10: return {"exponential(" + p + ", gamma=" + format_number(uniform(0.95, 1)) + w + ")", total, 0.0, peak, true};
      case 11: {
        const std::string shifted = coin() ? ", timescale=" + std::to_string(integer(1, 500)) + ", shift=true" : "";
        return {"invsqrt(" + p + ", warmup=" + std::to_string(std::max<int64_t>(warmup, 1)) + shifted + ")", total, 0.0,
                peak, true};
      }
      case 12: {
        if (coin())
          return {"restarts(" + p + f + ", cycles=" + std::to_string(integer(1, 20)) + w + ")", total, low, peak,
                  false};
        return {"restarts(" + p + f + ", period=" + std::to_string(integer(5, 300)) + ", mult=" + std::to_string(integer(1, 3)) + w + ")", total, low, peak, false};
      }
      case 13: {
        const std::string modes[] = {"triangular", "triangular2", "exp_range"};
        const std::string mode = modes[integer(0, 2)];
        const std::string gamma = mode == "exp_range" ? ", gamma=" + format_number(uniform(0.99, 1)) : "";
        return {"triangular(" + p + f + ", up=" + std::to_string(integer(1, 300)) + ", down=" +
                    std::to_string(integer(1, 300)) + ", mode=" + mode + gamma + w + ")",
                total, low, peak, true};
      }
      default: {
        const double div = uniform(2, 50), fdiv = uniform(2, 1e4);
        return {"onecycle(" + p + ", pct_start=" + format_number(uniform(0.1, 0.5)) + ", div_factor=" + format_number(div) +
                    ", final_div_factor=" + format_number(fdiv) + ", anneal=" + (coin() ? "cos" : "linear") + ")",
                std::max<int64_t>(total, 100), peak / div / fdiv, peak, true};
      }
    }
  }

 private:
  double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng_); }
  int64_t integer(int64_t a, int64_t b) { return std::uniform_int_distribution<int64_t>(a, b)(rng_); }
  bool coin() { return integer(0, 1) == 1; }
  std::mt19937 rng_;
};

TEST(ScheduleProperties, HoldForRandomValidSpecs) {
  SpecGenerator gen(20261121);
  for (int i = 0; i < 600; ++i) {
    const RandomSpec r = gen.next();
    SCOPED_TRACE(r.spec + " over " + std::to_string(r.total) + " steps");
    const Schedule s = parse_schedule(r.spec, r.total ? std::optional<int64_t>(r.total) : std::nullopt);
    const int64_t total = s.total();
    const double tol = 1e-12 * r.high;

    const Schedule back = parse_schedule(s.to_spec(), r.total ? std::optional<int64_t>(r.total) : std::nullopt);
    ASSERT_EQ(back.to_spec(), s.to_spec());
    for (int64_t t = 0; t <= total; ++t) {
      const double v = s(t);
      ASSERT_TRUE(std::isfinite(v)) << "step " << t;
      ASSERT_GE(v, r.low - tol) << "step " << t;
      ASSERT_LE(v, r.high + tol) << "step " << t;
      ASSERT_EQ(v, back(t)) << "round trip differs at step " << t;
    }
    ASSERT_NO_THROW(require_usable_rates(s, total)) << "a valid schedule's rates are refused";

    for (const Phase& phase : s.phases()) {
      if (phase.begin > 0 && !phase.jumps_at_begin) {
        const double before = s.at(static_cast<double>(phase.begin) - 1e-7);
        const double after = s.at(static_cast<double>(phase.begin));
        ASSERT_NEAR(before, after, 1e-5 * r.high) << "discontinuous at " << phase.begin;
      }
      if (r.continuous) {
        ASSERT_FALSE(phase.jumps_at_begin) << "jump at " << phase.begin;
      }
      if (phase.kind != PhaseKind::Decay) continue;
      // Within the phase; its end value belongs to the next phase unless the run ends there.
      const int64_t last = phase.end >= total ? total : phase.end - 1;
      for (int64_t t = phase.begin; t < last; ++t)
        ASSERT_LE(s(t + 1), s(t) + tol) << "increases inside a decay phase at step " << t;
    }
  }
}

}  // namespace
}  // namespace lrkit::schedules
