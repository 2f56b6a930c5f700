// join, warmup, floor and scale: schedules made of schedules (optax-style
// join_schedules; ALGORITHMS.md section 1, "Composition").
#include "common.hpp"

namespace lrkit::schedules::detail {

namespace {

const SpecValue& only_schedule(const Args& args) {
  if (args.schedules().size() != 1)
    args.fail_call(args.name() + " wraps exactly one schedule, e.g. " + args.name() + "(cosine(peak=1e-3), ...)");
  return *args.schedules().front();
}

MutableNode build_join(const Args& args, Context& ctx) {
  const auto& parts = args.schedules();
  if (parts.size() < 2) args.fail_call("join needs at least two schedules and at=[...] boundaries between them");
  if (!args.has("at")) args.fail_call("join needs at=[...] with one boundary per schedule after the first");
  const auto bounds = args.length_list("at", ctx.total);
  if (bounds.size() + 1 != parts.size())
    args.fail(args.value("at"), "join of " + std::to_string(parts.size()) + " schedules needs " +
                                    std::to_string(parts.size() - 1) + " boundaries, got " + std::to_string(bounds.size()));
  std::vector<int64_t> starts = {0};
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (bounds[i] <= starts.back())
      args.fail(args.value("at").items[i], "boundaries must be positive and increase strictly");
    starts.push_back(bounds[i]);
  }
  if (ctx.total && *ctx.total != kUnbounded && starts.back() >= *ctx.total)
    args.fail(args.value("at").items.back(), "the last boundary (" + std::to_string(starts.back()) +
                                                 ") must lie inside the run (" + std::to_string(*ctx.total) + " steps)");
  std::vector<NodePtr> pieces;
  for (size_t i = 0; i < parts.size(); ++i) {
    const bool last = i + 1 == parts.size();
    std::optional<int64_t> length;
    if (!last) {
      length = starts[i + 1] - starts[i];
    } else if (ctx.total && *ctx.total != kUnbounded) {
      length = *ctx.total - starts[i];
    }
    pieces.push_back(ctx.child(*parts[i], length));
  }
  const NodePtr& tail = pieces.back();
  const int64_t total = tail->total() == kUnbounded ? kUnbounded : starts.back() + tail->total();
  return std::make_shared<JoinNode>(std::move(pieces), std::move(starts), total);
}

MutableNode build_warmup(const Args& args, Context& ctx) {
  const SpecValue& inner_spec = only_schedule(args);
  if (!args.has("length")) args.fail_call("warmup needs 'length' in steps or percent");
  WarmupSpec w;
  w.length = args.length("length", 0, ctx.total);
  parse_ramp(args, "init", "shape", w);
  const bool prefix = args.flag("prefix", true);  // false: the ramp covers the schedule's first steps
  std::optional<int64_t> rest = ctx.total;
  if (ctx.total && *ctx.total != kUnbounded) {
    check_fits(args, *ctx.total, w.length, 0, "", "length");
    if (prefix) rest = *ctx.total - w.length;
  }
  NodePtr inner = ctx.child(inner_spec, rest);
  if (!prefix && inner->total() != kUnbounded && w.length >= inner->total())
    args.fail_key("length", "a warmup that is not a prefix must be shorter than its schedule (" +
                                std::to_string(inner->total()) + " steps), got " + std::to_string(w.length));
  return std::make_shared<WarmupNode>(w.length, w.init, w.shape, std::move(inner), prefix);
}

MutableNode build_floor(const Args& args, Context& ctx) {
  const SpecValue& inner_spec = only_schedule(args);
  const double minimum = args.rate("min");
  return std::make_shared<FloorNode>(ctx.child(inner_spec, ctx.total), minimum);
}

MutableNode build_scale(const Args& args, Context& ctx) {
  const SpecValue& inner_spec = only_schedule(args);
  const double factor = args.rate("by");
  return std::make_shared<ScaleNode>(ctx.child(inner_spec, ctx.total), factor);
}

}  // namespace

std::vector<Family> combinator_families() {
  return {
      {"join", {"at"}, true, build_join, "schedules end to end: join(a, b, ..., at=[b1, ...]); each sees steps from its start"},
      {"warmup", {"length", "init", "shape", "prefix"}, true, build_warmup,
       "a warmup ramp in front of any schedule; prefix=false lays it over the schedule's first steps instead "
       "(timm's warmup_prefix=False)"},
      {"floor", {"min"}, true, build_floor, "max(schedule, min)"},
      {"scale", {"by"}, true, build_scale, "schedule * by"},
  };
}

}  // namespace lrkit::schedules::detail
