// restarts (SGDR, PyTorch CosineAnnealingWarmRestarts) and onecycle (PyTorch
// OneCycleLR semantics, including its last step); ALGORITHMS.md section 1.
#include <cmath>
#include <utility>

#include "lrkit/common/numbers.hpp"

#include "common.hpp"

namespace lrkit::schedules::detail {

namespace {


// Cosine cycles of length period * mult^i, or `cycles` equal cycles over the run (Hugging Face's
// cosine_with_restarts: its cycles need not last whole steps); cycle i peaks at max(floor, peak * peak_decay^i).
class RestartsNode final : public ScheduleNode {
 public:
  struct Cycles {
    int64_t period = 0, mult = 1;  // the first cycle's length and its growth, or
    int64_t count = 0;             // this many equal cycles (period and mult unused)
  };

  RestartsNode(int64_t total, double peak, double floor, Cycles cycles, double peak_decay)
      : ScheduleNode(total), peak_(peak), floor_(floor), cycles_(cycles), peak_decay_(peak_decay) {}

  double at(double t) const override {
    const auto [cycle, angle] = locate(t);
    const double top = std::max(floor_, peak_ * std::pow(peak_decay_, cycle));
    return floor_ + (top - floor_) * 0.5 * (1.0 + std::cos(angle));
  }

  std::vector<Phase> phases() const override {
    std::vector<Phase> out;
    int64_t start = 0, length = cycles_.period;
    while (start < total()) {
      if (out.size() == kMaxListedCycles) {  // keep summaries bounded for tiny periods
        out.push_back({start, total(), PhaseKind::Cycle, true});
        break;
      }
      const int64_t end = cycles_.count > 0 ? count_cycle_start(static_cast<int64_t>(out.size()) + 1)
                          : (length >= total() - start) ? total() : start + length;
      out.push_back({start, end, PhaseKind::Decay, start > 0});
      start = end;
      if (length <= kUnbounded / cycles_.mult) length *= cycles_.mult;
    }
    return out;
  }

 private:
  // Step t's cycle and how far through it t is, as an angle from 0 (its start) to pi (its end), computed as the
  // reference computes it (PyTorch's or Hugging Face's).
  std::pair<double, double> locate(double t) const {
    if (cycles_.count > 0) {
      // Hugging Face's arithmetic, for the last digits: count * (t / T), its whole part the cycle; the run's end
      // finishes the last cycle at the floor.
      const double where = static_cast<double>(cycles_.count) * (t / static_cast<double>(total()));
      const double cycle = std::min(std::floor(where), static_cast<double>(cycles_.count - 1));
      return {cycle, kPi * (where - cycle)};
    }
    double start = 0.0, length = static_cast<double>(cycles_.period);
    int cycle = 0;
    if (cycles_.mult == 1) {
      cycle = static_cast<int>(std::min(std::floor(t / length), 1e9));
      start = static_cast<double>(cycle) * length;
    } else {
      while (t >= start + length) {
        start += length;
        length *= static_cast<double>(cycles_.mult);
        ++cycle;
      }
    }
    return {cycle, kPi * (t - start) / length};
  }

  // The first step of equal cycle k (the run's end for k = count): the first that locate() puts in cycle k.
  int64_t count_cycle_start(int64_t k) const {
    if (k >= cycles_.count) return total();
    const int64_t count = cycles_.count;
    int64_t step = k * (total() / count) + (k * (total() % count) + count - 1) / count;  // ceil(k T / count)
    while (step > 0 && locate(static_cast<double>(step - 1)).first >= static_cast<double>(k)) --step;
    while (step < total() && locate(static_cast<double>(step)).first < static_cast<double>(k)) ++step;
    return step;
  }

  double peak_, floor_;
  Cycles cycles_;
  double peak_decay_;
};

MutableNode build_restarts(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total);
  check_fits(args, total, warmup.length, 0, "");
  RestartsNode::Cycles cycles;
  if (args.has("cycles")) {
    if (args.has("period")) args.fail_key("cycles", "give 'period' (the first cycle's length) or 'cycles', not both");
    if (args.has("mult")) args.fail_key("mult", "'mult' grows cycles of a 'period'; 'cycles' makes them equal");
    const double count = args.positive("cycles", 1.0);
    if (count != std::floor(count) || count > static_cast<double>(total - warmup.length))
      args.fail_key("cycles", "'cycles' must be a whole number from 1 to the steps after the warmup (" +
                                  std::to_string(total - warmup.length) + "), got " + format_number(count));
    cycles.count = static_cast<int64_t>(count);
  } else {
    if (!args.has("period"))
      args.fail_call("restarts needs 'period', the length of the first cycle, or 'cycles', how many equal cycles");
    cycles.period = args.length("period", 1, total);
    if (cycles.period < 1) args.fail_key("period", "'period' must be at least 1 step");
    const double mult = args.real("mult", 1.0);
    if (!(mult >= 1.0) || mult != std::floor(mult) || mult > 1e6)
      args.fail_key("mult", "'mult' must be a whole number >= 1 (PyTorch's T_mult), got " + format_number(mult));
    cycles.mult = static_cast<int64_t>(mult);
  }
  const double peak_decay = args.positive("peak_decay", 1.0);
  if (peak_decay > 1.0) args.fail_key("peak_decay", "'peak_decay' must be in (0, 1] (got " + format_number(peak_decay) + ")");
  const double floor = args.floor_of("floor", peak, 0.0);
  return with_warmup(warmup, std::make_shared<RestartsNode>(total - warmup.length, peak, floor, cycles, peak_decay));
}

// PyTorch OneCycleLR: phases end at (float) pct_start * T - 1 and T - 1 (three
// phases: pct*T - 1, 2 pct*T - 2, T - 1); annealing by cos or linear. The
// momentum (cycle_momentum) anneals over the same phases between max and base.
class OneCycleNode final : public ScheduleNode {
 public:
  struct PhaseDef {
    double end_step, start_lr, end_lr;
    bool momentum_starts_at_max, momentum_ends_at_max;
  };
  OneCycleNode(int64_t total, std::vector<PhaseDef> defs, bool cos)
      : ScheduleNode(total), defs_(std::move(defs)), cos_(cos) {}

  double at(double t) const override {
    const auto [d, pct] = locate(t);
    return anneal(d.start_lr, d.end_lr, pct);
  }

  std::optional<double> momentum_at(double t, double base, double max) const override {
    const auto [d, pct] = locate(t);
    return anneal(d.momentum_starts_at_max ? max : base, d.momentum_ends_at_max ? max : base, pct);
  }

  std::vector<Phase> phases() const override {
    std::vector<Phase> out;
    int64_t begin = 0;
    for (size_t i = 0; i < defs_.size(); ++i) {
      const bool last = i + 1 == defs_.size();
      const int64_t end = last ? total() : static_cast<int64_t>(std::ceil(defs_[i].end_step));
      const bool rising = defs_[i].end_lr > defs_[i].start_lr;
      out.push_back({begin, end, rising ? PhaseKind::Warmup : PhaseKind::Decay, false});
      begin = end;
    }
    return out;
  }

 private:
  // The phase of step t and the share of it done, as OneCycleLR finds them (its last step is T - 1).
  std::pair<const PhaseDef&, double> locate(double t) const {
    t = std::min(t, static_cast<double>(total() - 1));
    double start = 0.0;
    for (size_t i = 0; i + 1 < defs_.size(); ++i) {
      if (t <= defs_[i].end_step) return {defs_[i], (t - start) / (defs_[i].end_step - start)};
      start = defs_[i].end_step;
    }
    return {defs_.back(), (t - start) / (defs_.back().end_step - start)};
  }

  double anneal(double start, double end, double pct) const {
    if (cos_) return end + (start - end) / 2.0 * (std::cos(kPi * pct) + 1.0);
    return (end - start) * pct + start;
  }

  std::vector<PhaseDef> defs_;
  bool cos_;
};

MutableNode build_onecycle(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const double pct_start = args.real("pct_start", 0.3);
  if (!(pct_start > 0 && pct_start < 1)) args.fail_key("pct_start", "'pct_start' must be in (0, 1) (got " + format_number(pct_start) + ")");
  const double div_factor = args.positive("div_factor", 25.0);
  const double final_div_factor = args.positive("final_div_factor", 1e4);
  const bool cos = args.word("anneal", "cos", {"cos", "linear"}) == "cos";
  const bool three_phase = args.flag("three_phase", false);
  const double initial = peak / div_factor;
  if (!std::isfinite(initial))
    args.fail_key("div_factor", "the initial rate peak / div_factor overflows (" + format_number(peak) + " / " +
                                    format_number(div_factor) + ")");
  const double minimum = initial / final_div_factor;
  if (!std::isfinite(minimum))
    args.fail_key("final_div_factor", "the final rate peak / div_factor / final_div_factor overflows");
  const double t = static_cast<double>(total);
  // OneCycleLR's momentum goes from max to base while the rate rises and back while it falls; in a third phase it
  // stays at max.
  std::vector<OneCycleNode::PhaseDef> defs = {{pct_start * t - 1.0, initial, peak, true, false}};
  if (three_phase) defs.push_back({2.0 * pct_start * t - 2.0, peak, initial, false, true});
  defs.push_back({t - 1.0, three_phase ? initial : peak, minimum, three_phase, true});
  double start = 0.0;
  for (const auto& d : defs) {
    if (!(d.end_step > start))
      args.fail_call("onecycle with total " + std::to_string(total) + " and pct_start " + format_number(pct_start) +
                     " has an empty phase (PyTorch divides by zero here); lengthen the run or change pct_start");
    start = d.end_step;
  }
  return std::make_shared<OneCycleNode>(total, std::move(defs), cos);
}

// Wen et al. 2024's cyclic-cosine baseline for budgets B_1 < ... < B_k: cosine
// from the peak to the floor (default 10 %) by B_1; before each later budget a
// linear rewarm from the floor back to the peak over `rewarm` steps, then a
// cosine to the floor by that budget. Checkpoints at the budgets.
MutableNode build_budget_cycles(const Args& args, Context&) {
  const double peak = args.rate("peak");
  if (!args.has("budgets")) args.fail_call("cyclic needs budgets=[B1, B2, ...] in steps");
  const auto budgets = args.length_list("budgets", std::nullopt);
  if (budgets.empty()) args.fail(args.value("budgets"), "cyclic needs at least one budget");
  for (size_t i = 0; i < budgets.size(); ++i)
    if (budgets[i] < 1 || (i > 0 && budgets[i] <= budgets[i - 1]))
      args.fail(args.value("budgets").items[i],
                "budgets must be positive and increasing (entry " + std::to_string(i + 1) + " = " +
                    std::to_string(budgets[i]) + ")");
  const double floor = args.floor_of("floor", peak, 0.1 * peak);
  const int64_t rewarm = args.length("rewarm", fraction_of(budgets.front(), 0.05), std::nullopt);
  const WarmupSpec warmup = parse_warmup(args, budgets.back());
  if (warmup.length >= budgets.front())
    args.fail_key("warmup", "warmup (" + std::to_string(warmup.length) + " steps) must end before the first budget (" +
                                std::to_string(budgets.front()) + ")");
  std::vector<NodePtr> pieces = {std::make_shared<ShapeNode>(budgets.front() - warmup.length, peak, floor, DecayShape::Cosine, 1.0)};
  std::vector<int64_t> starts = {0}, checkpoints = {budgets.front() - warmup.length};
  for (size_t i = 1; i < budgets.size(); ++i) {
    const int64_t cycle = budgets[i] - budgets[i - 1];
    if (rewarm >= cycle)
      args.fail_key("rewarm", "rewarm (" + std::to_string(rewarm) + " steps) must be shorter than the cycle from " +
                                  std::to_string(budgets[i - 1]) + " to " + std::to_string(budgets[i]));
    const WarmupSpec ramp{rewarm, floor, WarmupShape::Linear};
    pieces.push_back(with_warmup(ramp, std::make_shared<ShapeNode>(cycle - rewarm, peak, floor, DecayShape::Cosine, 1.0)));
    starts.push_back(budgets[i - 1] - warmup.length);
    checkpoints.push_back(budgets[i] - warmup.length);
  }
  auto body = std::make_shared<JoinNode>(std::move(pieces), std::move(starts), budgets.back() - warmup.length, std::move(checkpoints));
  return with_warmup(warmup, std::move(body));
}

}  // namespace

std::vector<Family> cyclic_families() {
  const auto w = kWarmupKeys;
  return {
      {"restarts", with_keys(with_keys({"peak", "period", "mult", "peak_decay", "floor", "total"}, w), {"cycles"}),
       false, build_restarts,
       "cosine with warm restarts (SGDR; PyTorch CosineAnnealingWarmRestarts)"},
      {"onecycle", {"peak", "pct_start", "div_factor", "final_div_factor", "anneal", "three_phase", "total"}, false,
       build_onecycle, "one cycle policy with PyTorch OneCycleLR semantics"},
      {"cyclic", with_keys({"peak", "budgets", "rewarm", "floor"}, w), false, build_budget_cycles,
       "cyclic cosine over budgets (Wen et al. 2024's baseline): cosine to floor (10%) by each budget, linear rewarm between"},
  };
}

}  // namespace lrkit::schedules::detail
