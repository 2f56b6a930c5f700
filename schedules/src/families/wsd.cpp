// wsd, wsds and infinite: schedules with a stable plateau (ALGORITHMS.md
// sections 2 and 5; Wen et al. 2024, Hagele et al. 2024, Ibrahim et al. 2024).
#include <stdexcept>

#include "common.hpp"
#include "lrkit/schedules/wsds_plan.hpp"

namespace lrkit::schedules::detail {

namespace {

// Warmup W -> stable at peak until T - D -> decay over D with any shape.
MutableNode build_wsd(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total);
  const int64_t decay = args.length("decay", fraction_of(total, 0.2), total);
  if (decay < 1)  // a percentage (the default 20 %) of a short run rounds to 0
    args.fail_key("decay", "wsd needs a decay of at least 1 step (got " + std::to_string(decay) + " of the run's " +
                               std::to_string(total) + " steps)");
  check_fits(args, total, warmup.length, decay, "decay");
  const DecayShape shape = parse_shape(args, "shape", DecayShape::OneMinusSqrt);
  const double floor = args.floor_of("floor", peak, 0.0);
  check_shape_floor(args, shape, floor);
  const double power = args.positive("power", 1.0);
  const int64_t stable = total - warmup.length - decay;
  std::vector<NodePtr> pieces = {std::make_shared<ConstantNode>(stable, peak),
                                 std::make_shared<ShapeNode>(decay, peak, floor, shape, power)};
  auto body = std::make_shared<JoinNode>(std::move(pieces), std::vector<int64_t>{0, stable}, stable + decay);
  return with_warmup(warmup, std::move(body));
}

// WSD-S: `decay` is a percentage of each budget, one length for all, or a list.
std::vector<int64_t> wsds_decays(const Args& args, const std::vector<int64_t>& budgets) {
  if (!args.has("decay")) return proportional_decays(budgets, 0.1);
  const SpecValue& v = args.value("decay");
  if (v.kind == SpecValue::Kind::List) {
    const auto decays = args.length_list("decay", std::nullopt);
    if (decays.size() != budgets.size())
      args.fail(v, "give one decay per budget (" + std::to_string(budgets.size()) + "), got " +
                       std::to_string(decays.size()));
    return decays;
  }
  if (v.kind == SpecValue::Kind::Number && v.percent) {
    if (!(v.number > 0 && v.number <= 100)) args.fail(v, "'decay' must be in (0%, 100%]");
    return proportional_decays(budgets, v.number / 100.0);
  }
  return std::vector<int64_t>(budgets.size(), args.length("decay", 0, std::nullopt));
}

// Where a refused plan points: the budget or decay entry named, or the whole 'decay' when it is one value for all
// (a default decay, 10 % of each budget, is the budget's).
const SpecValue& refused_entry(const Args& args, const WsdsPlanError& e) {
  const bool decay = e.entry == WsdsPlanError::Entry::Decay && args.has("decay");
  const SpecValue& list = args.value(decay ? "decay" : "budgets");
  return list.kind == SpecValue::Kind::List && e.index < list.items.size() ? list.items[e.index] : list;
}

MutableNode build_wsds(const Args& args, Context&) {
  const double peak = args.rate("peak");
  if (!args.has("budgets")) args.fail_call("wsds needs budgets=[B1, B2, ...] in steps");
  const auto budgets = args.length_list("budgets", std::nullopt);
  if (budgets.empty()) args.fail(args.value("budgets"), "wsds needs at least one budget");
  WsdsPlan plan;
  try {
    plan = plan_wsds(budgets, wsds_decays(args, budgets));
  } catch (const WsdsPlanError& e) {
    args.fail(refused_entry(args, e), e.what());
  }
  const WarmupSpec warmup = parse_warmup(args, plan.total);
  const int64_t first_decay = plan.segments.front().decay ? plan.segments.front().begin : plan.segments.front().end;
  if (warmup.length > first_decay)
    args.fail_key("warmup", "warmup (" + std::to_string(warmup.length) + " steps) must end before the first decay starts (step " +
                                std::to_string(first_decay) + ")");
  const DecayShape shape = parse_shape(args, "shape", DecayShape::Linear);
  const double floor = args.floor_of("floor", peak, 0.0);
  check_shape_floor(args, shape, floor);
  const double power = args.positive("power", 1.0);

  // The warmup takes the first `warmup.length` steps of the first stable segment.
  std::vector<NodePtr> pieces;
  std::vector<int64_t> starts;
  for (const WsdsSegment& seg : plan.segments) {
    const int64_t begin = std::max<int64_t>(seg.begin - warmup.length, 0);
    const int64_t end = seg.end - warmup.length;
    if (end <= begin) continue;
    starts.push_back(begin);
    if (seg.decay) {
      pieces.push_back(std::make_shared<ShapeNode>(end - begin, peak, floor, shape, power));
    } else {
      pieces.push_back(std::make_shared<ConstantNode>(end - begin, peak));
    }
  }
  std::vector<int64_t> checkpoints;
  for (int64_t c : plan.checkpoints) checkpoints.push_back(c - warmup.length);
  auto body = std::make_shared<JoinNode>(std::move(pieces), std::move(starts), plan.total - warmup.length,
                                         std::move(checkpoints));
  return with_warmup(warmup, std::move(body));
}

// Ibrahim et al. 2024: warmup -> cooldown to `const` -> constant -> final
// anneal const * (floor / const)^s.
MutableNode build_infinite(const Args& args, Context& ctx) {
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  const WarmupSpec warmup = parse_warmup(args, total, fraction_of(total, 0.01));
  if (!args.has("const")) args.fail_call("infinite needs 'const', the constant rate after the cooldown (e.g. const=50%)");
  const double constant = args.floor_of("const", peak, 0.0);
  if (!(constant > 0)) args.fail_key("const", "'const' must be > 0");
  const double floor = args.floor_of("floor", peak, 0.01 * constant);
  if (!(floor > 0)) args.fail_key("floor", "the final anneal is geometric, so floor must be > 0");
  if (floor > constant)
    args.fail_key("floor", "floor (" + format_number(floor) + ") must not exceed const (" + format_number(constant) + ")");
  const int64_t cooldown = args.length("cooldown", fraction_of(total, 0.1), total);
  const int64_t anneal = args.length("anneal", fraction_of(total, 0.1), total);
  if (anneal < 1) args.fail_key("anneal", "the final anneal needs at least 1 step");
  check_fits(args, total, warmup.length, cooldown + anneal, "cooldown + anneal");
  const DecayShape shape = parse_shape(args, "shape", DecayShape::Cosine);
  const double power = args.positive("power", 1.0);
  const int64_t plateau = total - warmup.length - cooldown - anneal;

  std::vector<NodePtr> pieces;
  std::vector<int64_t> starts;
  int64_t cursor = 0;
  if (cooldown > 0) {
    starts.push_back(cursor);
    pieces.push_back(std::make_shared<ShapeNode>(cooldown, peak, constant, shape, power));
    cursor += cooldown;
  }
  if (plateau > 0) {
    starts.push_back(cursor);
    pieces.push_back(std::make_shared<ConstantNode>(plateau, constant));
    cursor += plateau;
  }
  starts.push_back(cursor);
  pieces.push_back(std::make_shared<ShapeNode>(anneal, constant, floor, DecayShape::Geometric, 1.0));
  cursor += anneal;
  return with_warmup(warmup, std::make_shared<JoinNode>(std::move(pieces), std::move(starts), cursor));
}

}  // namespace

std::vector<Family> wsd_families() {
  const auto w = kWarmupKeys;
  return {
      {"wsd", with_keys({"peak", "floor", "decay", "shape", "power", "total"}, w), false, build_wsd,
       "warmup-stable-decay: plateau at peak, then decay (default 20%, shape 1-sqrt) to floor"},
      {"wsds", with_keys({"peak", "budgets", "decay", "floor", "shape", "power"}, w), false, build_wsds,
       "WSD-S (Wen et al. 2024): one branch decaying for each budget, then back to peak"},
      {"infinite", with_keys({"peak", "const", "floor", "cooldown", "anneal", "shape", "power", "total"}, w), false,
       build_infinite, "infinite schedule (Ibrahim et al. 2024): cooldown to const, constant, geometric anneal"},
  };
}

}  // namespace lrkit::schedules::detail
