// constant, linear, cosine, polynomial, uba and rewarm: an optional warmup,
// then one curve from the peak to the floor over the rest of the run
// (ALGORITHMS.md sections 1, 3 and 5); cosine may also wave between them.
#include <cmath>

#include "lrkit/common/numbers.hpp"

#include "common.hpp"

namespace lrkit::schedules::detail {

namespace {


// UBA (Tang et al. 2025): lr = floor + (peak - floor) 2u / (2 phi + (2 - phi) u),
// u = 1 + cos(pi s). phi = 2 is cosine; small phi holds the peak longer.
class UbaNode final : public ScheduleNode {
 public:
  UbaNode(int64_t total, double peak, double floor, double phi)
      : ScheduleNode(total), peak_(peak), floor_(floor), phi_(phi), inv_total_(1.0 / static_cast<double>(total)) {}
  double at(double t) const override {
    const double angle = kPi * t * inv_total_;
    const double u = 1.0 + std::cos(angle);
    // The factor (at most 1) first: (peak - floor) * 2u overflowed at a peak near the largest double.
    if (phi_ <= 2.0) return floor_ + (peak_ - floor_) * (2.0 * u / (2.0 * phi_ + (2.0 - phi_) * u));
    // For phi > 2, (2 - phi) u cancels 2 phi near the start: at phi = 1e20 the denominator of step 0 was 0 and
    // the rate inf. The same value as a sum of non-negative terms, with 2 - u = 2 sin^2(angle / 2):
    // 2u / (2 phi + (2 - phi) u) = u / (phi sin^2(angle / 2) + u).
    const double half_sine = std::sin(0.5 * angle);
    return floor_ + (peak_ - floor_) * u / (phi_ * half_sine * half_sine + u);
  }
  std::vector<Phase> phases() const override { return {{0, total(), PhaseKind::Decay, false}}; }

 private:
  double peak_, floor_, phi_, inv_total_;
};

// Hugging Face's cosine with num_cycles = c: floor + (peak - floor) (1 + cos(2 pi c s)) / 2, s = t / T; c = 0.5 is
// the half cosine, c = 1 falls to the floor and climbs back to the peak. Its arithmetic is Hugging Face's, for the
// last digits: the angle pi c 2 s, with s a quotient (a zero of the wave comes out exactly 0).
class CosineWavesNode final : public ScheduleNode {
 public:
  CosineWavesNode(int64_t total, double peak, double floor, double cycles)
      : ScheduleNode(total), peak_(peak), floor_(floor), cycles_(cycles) {}
  double at(double t) const override {
    const double s = t / static_cast<double>(total());
    return floor_ + (peak_ - floor_) * (0.5 * (1.0 + std::cos(kPi * cycles_ * 2.0 * s)));
  }
  // Half waves, falling then rising; each turns at the step nearest its trough or crest.
  std::vector<Phase> phases() const override {
    std::vector<Phase> out;
    const double half_wave = static_cast<double>(total()) / (2.0 * cycles_);
    int64_t begin = 0;
    for (double k = 1; begin < total(); ++k) {
      if (out.size() == kMaxListedCycles) {
        out.push_back({begin, total(), PhaseKind::Cycle, false});
        break;
      }
      const double turn = k * half_wave;  // inf for a tiny count of cycles
      const int64_t end =
          turn >= static_cast<double>(total()) ? total() : std::max<int64_t>(begin + 1, std::llround(turn));
      out.push_back({begin, end, out.size() % 2 == 0 ? PhaseKind::Decay : PhaseKind::Ramp, false});
      begin = end;
    }
    return out;
  }

 private:
  double peak_, floor_, cycles_;
};

MutableNode build_constant(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const auto total = args.total_or(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total);
  if (total && *total != kUnbounded) check_fits(args, *total, warmup.length, 0, "");
  const int64_t rest = total ? (*total == kUnbounded ? kUnbounded : *total - warmup.length) : kUnbounded;
  return with_warmup(warmup, std::make_shared<ConstantNode>(rest, peak));
}

// Shared by linear, cosine, polynomial and rewarm; `cycles` other than 0.5 makes a cosine wave (CosineWavesNode).
MutableNode build_shaped(const Args& args, Context& ctx, DecayShape shape, double default_floor_ratio,
                         double default_warmup_fraction, double cycles = 0.5) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total, fraction_of(total, default_warmup_fraction));
  check_fits(args, total, warmup.length, 0, "");
  double floor = 0.0;
  if (shape == DecayShape::Linear) {
    floor = args.rate("floor", 0.0);  // linear may also ramp up: floor is just its end value
  } else {
    floor = args.floor_of("floor", peak, default_floor_ratio * peak);
  }
  check_shape_floor(args, shape, floor);
  if (cycles != 0.5)
    return with_warmup(warmup, std::make_shared<CosineWavesNode>(total - warmup.length, peak, floor, cycles));
  const double power = args.positive("power", 1.0);
  return with_warmup(warmup, std::make_shared<ShapeNode>(total - warmup.length, peak, floor, shape, power));
}

MutableNode build_linear(const Args& args, Context& ctx) { return build_shaped(args, ctx, DecayShape::Linear, 0.0, 0); }
// cycles = 0.5 is the half cosine of every other cosine-shaped decay, bit for bit.
MutableNode build_cosine(const Args& args, Context& ctx) {
  const double cycles = args.positive("cycles", 0.5);
  if (cycles > 1e9)  // the angle 2 pi c s would keep too few digits for a smooth wave
    args.fail_key("cycles", "'cycles' must be at most 1e9 (got " + format_number(cycles) + ")");
  return build_shaped(args, ctx, DecayShape::Cosine, 0.0, 0, cycles);
}
MutableNode build_polynomial(const Args& args, Context& ctx) {
  return build_shaped(args, ctx, DecayShape::Polynomial, 0.0, 0);
}
MutableNode build_rewarm(const Args& args, Context& ctx) {
  return build_shaped(args, ctx, parse_shape(args, "shape", DecayShape::Cosine), 0.1, 0.01);
}

MutableNode build_uba(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total);
  check_fits(args, total, warmup.length, 0, "");
  const double floor = args.floor_of("floor", peak, 0.0);
  if (!args.has("phi")) args.fail_call("uba needs 'phi' (> 0; 2 is cosine, smaller holds the peak longer)");
  const double phi = args.positive("phi", 2.0);
  return with_warmup(warmup, std::make_shared<UbaNode>(total - warmup.length, peak, floor, phi));
}

}  // namespace

std::vector<Family> decay_families() {
  const auto w = kWarmupKeys;
  return {
      {"constant", with_keys({"peak", "total"}, w), false, build_constant, "peak for the whole run"},
      {"linear", with_keys({"peak", "floor", "total"}, w), false, build_linear,
       "straight line from peak to floor (floor > peak ramps up)"},
      {"cosine", with_keys(with_keys({"peak", "floor", "total"}, w), {"cycles"}), false, build_cosine,
       "half cosine from peak to floor (PyTorch CosineAnnealingLR); cycles = c waves c times, down and up "
       "(Hugging Face's num_cycles; default 0.5)"},
      {"polynomial", with_keys({"peak", "floor", "power", "total"}, w), false, build_polynomial,
       "(1 - s)^power from peak to floor (PyTorch PolynomialLR)"},
      {"uba", with_keys({"peak", "phi", "floor", "total"}, w), false, build_uba,
       "unified budget-aware schedule (Tang et al. 2025); phi = 2 is cosine"},
      {"rewarm", with_keys({"peak", "floor", "shape", "power", "total"}, w), false, build_rewarm,
       "continual pre-training rewarm (Gupta et al. 2023): warmup (default 1%) to peak, cosine to floor (default 10%)"},
  };
}

}  // namespace lrkit::schedules::detail
