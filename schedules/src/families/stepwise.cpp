// step, multistep, exponential, invsqrt and triangular: schedules without a natural end
// (PyTorch StepLR, MultiStepLR, ExponentialLR, CyclicLR; inverse square root).
#include <algorithm>
#include <cmath>
#include <utility>

#include "lrkit/common/numbers.hpp"

#include "common.hpp"

namespace lrkit::schedules::detail {

namespace {

// peak * gamma^n, 0 for a zero peak at every n: PyTorch's ExponentialLR multiplies its 0 by gamma step by step, where
// 0 * pow(gamma, n) was 0 * Inf = NaN once gamma^n overflowed.
double times_power(double peak, double gamma, double n) { return peak == 0.0 ? 0.0 : peak * std::pow(gamma, n); }

// peak * gamma^(number of drops up to t): drops every `every` steps, or at milestones.
class StepNode final : public ScheduleNode {
 public:
  StepNode(int64_t total, double peak, double gamma, int64_t every, std::vector<int64_t> milestones)
      : ScheduleNode(total), peak_(peak), gamma_(gamma), every_(every), milestones_(std::move(milestones)) {}
  double at(double t) const override {
    double drops = 0.0;
    if (every_ > 0) {
      drops = std::floor(t / static_cast<double>(every_));
    } else {
      drops = static_cast<double>(std::upper_bound(milestones_.begin(), milestones_.end(), t,
                                                   [](double v, int64_t m) { return v < static_cast<double>(m); }) -
                                  milestones_.begin());
    }
    return times_power(peak_, gamma_, drops);
  }
  std::vector<Phase> phases() const override {
    return {{0, total(), gamma_ <= 1.0 ? PhaseKind::Decay : PhaseKind::Ramp, false}};
  }

 private:
  double peak_, gamma_;
  int64_t every_;
  std::vector<int64_t> milestones_;
};

class ExponentialNode final : public ScheduleNode {
 public:
  ExponentialNode(int64_t total, double peak, double gamma) : ScheduleNode(total), peak_(peak), gamma_(gamma) {}
  double at(double t) const override { return times_power(peak_, gamma_, t); }
  std::vector<Phase> phases() const override {
    return {{0, total(), gamma_ <= 1.0 ? PhaseKind::Decay : PhaseKind::Ramp, false}};
  }

 private:
  double peak_, gamma_;
};

// peak * sqrt(timescale / max(t + offset, timescale)), t counted from the warmup's end: the offset is the warmup,
// so that the rate holds until step `timescale` (T5, fairseq), or, shifted, the timescale, so that it decays from the
// warmup's end (big_vision's rsqrt, Hugging Face's get_inverse_sqrt_schedule).
class InvSqrtNode final : public ScheduleNode {
 public:
  InvSqrtNode(int64_t total, double peak, double timescale, double offset)
      : ScheduleNode(total), peak_(peak), timescale_(timescale), offset_(offset) {}
  double at(double t) const override { return peak_ * std::sqrt(timescale_ / std::max(t + offset_, timescale_)); }
  std::vector<Phase> phases() const override { return {{0, total(), PhaseKind::Decay, false}}; }

 private:
  double peak_, timescale_, offset_;
};

// Cyclical learning rates (Smith 2017), with PyTorch CyclicLR's arithmetic: cycles of up + down steps, floor to peak
// over `up` and back over `down`; the swing is halved every cycle (triangular2) or scaled by gamma^t (exp_range).
class TriangularNode final : public ScheduleNode {
 public:
  enum class Mode { Triangular, Halving, ExpRange };

  TriangularNode(int64_t total, double peak, double floor, int64_t up, int64_t down, Mode mode, double gamma)
      : ScheduleNode(total), peak_(peak), floor_(floor), up_(up), down_(down), mode_(mode), gamma_(gamma) {}

  double at(double t) const override {
    const auto [height, scale] = swing(t);
    return floor_ + (peak_ - floor_) * height * scale;
  }

  // CyclicLR's momentum: max where the rate is at the floor, down towards base as the rate swings up.
  std::optional<double> momentum_at(double t, double base, double max) const override {
    const auto [height, scale] = swing(t);
    return max - (max - base) * height * scale;
  }

  std::vector<Phase> phases() const override {
    std::vector<Phase> out;
    for (int64_t start = 0; start < total(); start += std::min(up_ + down_, total() - start)) {
      if (out.size() >= 2 * kMaxListedCycles) {  // keep summaries of long runs of short cycles bounded
        out.push_back({start, total(), PhaseKind::Cycle, false});
        break;
      }
      const int64_t top = start + std::min(up_, total() - start);
      out.push_back({start, top, PhaseKind::Ramp, false});
      if (top < total()) out.push_back({top, start + std::min(up_ + down_, total() - start), PhaseKind::Decay, false});
    }
    return out;
  }

 private:
  // Where in its cycle step t is (0 at the floor, 1 at the peak), and the swing's scale there. CyclicLR computes the
  // position as 1 + t / size - cycle, and so does this, for its last digits.
  std::pair<double, double> swing(double t) const {
    const double size = static_cast<double>(up_ + down_);
    const double cycle = std::floor(1.0 + t / size);
    const double x = 1.0 + t / size - cycle;
    const double up_share = static_cast<double>(up_) / size;
    return {x <= up_share ? x / up_share : (x - 1.0) / (up_share - 1.0), scale(cycle, t)};
  }

  double scale(double cycle, double t) const {
    switch (mode_) {
      case Mode::Triangular: return 1.0;
      case Mode::Halving: return 1.0 / std::pow(2.0, cycle - 1.0);
      case Mode::ExpRange: return std::pow(gamma_, t);
    }
    return 1.0;
  }

  double peak_, floor_;
  int64_t up_, down_;
  Mode mode_;
  double gamma_;
};

struct Frame {
  WarmupSpec warmup;
  int64_t rest = kUnbounded;  // steps after the warmup
};

Frame open_ended_frame(const Args& args, const Context& ctx) {
  const auto total = args.total_or(ctx.total);
  Frame f{parse_warmup(args, total), kUnbounded};
  if (total && *total != kUnbounded) {
    check_fits(args, *total, f.warmup.length, 0, "");
    f.rest = *total - f.warmup.length;
  }
  return f;
}

double gamma_of(const Args& args) { return args.positive("gamma", 0.1); }

MutableNode build_step(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const Frame f = open_ended_frame(args, ctx);
  if (!args.has("every")) args.fail_call("step needs 'every', the number of steps between drops");
  const int64_t every = args.length("every", 1, ctx.total);
  if (every < 1) args.fail_key("every", "'every' must be at least 1 step");
  return with_warmup(f.warmup, std::make_shared<StepNode>(f.rest, peak, gamma_of(args), every, std::vector<int64_t>{}));
}

MutableNode build_multistep(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const Frame f = open_ended_frame(args, ctx);
  if (!args.has("milestones")) args.fail_call("multistep needs milestones=[m1, m2, ...]");
  const auto milestones = args.length_list("milestones", args.total_or(ctx.total));
  for (size_t i = 1; i < milestones.size(); ++i)
    if (milestones[i] <= milestones[i - 1])
      args.fail(args.value("milestones").items[i], "milestones must increase strictly");
  return with_warmup(f.warmup, std::make_shared<StepNode>(f.rest, peak, gamma_of(args), 0, milestones));
}

MutableNode build_exponential(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const Frame f = open_ended_frame(args, ctx);
  if (!args.has("gamma")) args.fail_call("exponential needs 'gamma', the factor per step");
  return with_warmup(f.warmup, std::make_shared<ExponentialNode>(f.rest, peak, gamma_of(args)));
}

MutableNode build_invsqrt(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const Frame f = open_ended_frame(args, ctx);
  const int64_t timescale = args.length("timescale", std::max<int64_t>(f.warmup.length, 1), args.total_or(ctx.total));
  if (timescale < 1) args.fail_key("timescale", "'timescale' must be at least 1 step");
  const bool shift = args.flag("shift", false);
  return with_warmup(f.warmup, std::make_shared<InvSqrtNode>(f.rest, peak, static_cast<double>(timescale),
                                                             static_cast<double>(shift ? timescale : f.warmup.length)));
}

MutableNode build_triangular(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const Frame f = open_ended_frame(args, ctx);
  const double floor = args.floor_of("floor", peak, 0.0);
  if (!args.has("up")) args.fail_call("triangular needs 'up', the steps from floor to peak (PyTorch's step_size_up)");
  const int64_t up = args.length("up", 1, args.total_or(ctx.total));
  if (up < 1) args.fail_key("up", "'up' must be at least 1 step");
  const int64_t down = args.length("down", up, args.total_or(ctx.total));
  if (down < 1) args.fail_key("down", "'down' must be at least 1 step");
  const std::string mode = args.word("mode", "triangular", {"triangular", "triangular2", "exp_range"});
  if (args.has("gamma") && mode != "exp_range")
    args.fail_key("gamma", "'gamma' scales the cycles of mode=exp_range only (this spec has mode=" + mode + ")");
  const double gamma = args.positive("gamma", 1.0);
  if (gamma > 1.0)
    args.fail_key("gamma", "'gamma' must be in (0, 1] (got " + format_number(gamma) + "): a larger one grows the swing "
                           "without bound");
  const auto kind = mode == "triangular"    ? TriangularNode::Mode::Triangular
                    : mode == "triangular2" ? TriangularNode::Mode::Halving
                                            : TriangularNode::Mode::ExpRange;
  return with_warmup(f.warmup, std::make_shared<TriangularNode>(f.rest, peak, floor, up, down, kind, gamma));
}

}  // namespace

std::vector<Family> stepwise_families() {
  const auto w = kWarmupKeys;
  return {
      {"step", with_keys({"peak", "every", "gamma", "total"}, w), false, build_step,
       "multiply by gamma (default 0.1) every N steps (PyTorch StepLR)"},
      {"multistep", with_keys({"peak", "milestones", "gamma", "total"}, w), false, build_multistep,
       "multiply by gamma (default 0.1) at each milestone (PyTorch MultiStepLR)"},
      {"exponential", with_keys({"peak", "gamma", "total"}, w), false, build_exponential,
       "peak * gamma^t (PyTorch ExponentialLR)"},
      {"invsqrt", with_keys({"peak", "timescale", "shift", "total"}, w), false, build_invsqrt,
       "peak * sqrt(S / max(t, S)) after a warmup of W steps (timescale S defaults to W); shift=true decays from the "
       "warmup's end, peak * sqrt(S / (t - W + S)) (Hugging Face, big_vision)"},
      {"triangular", with_keys({"peak", "floor", "up", "down", "mode", "gamma", "total"}, w), false, build_triangular,
       "cyclical rates (Smith 2017; PyTorch CyclicLR): floor to peak over `up` steps, back over `down` (default up); "
       "mode triangular2 halves the swing each cycle, exp_range scales it by gamma^t"},
  };
}

}  // namespace lrkit::schedules::detail
