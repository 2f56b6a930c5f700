#include "lrkit/schedules/factory.hpp"

#include <cmath>

#include "families/common.hpp"
#include "lrkit/common/closest_name.hpp"
#include "lrkit/schedules/spec.hpp"

namespace lrkit::schedules {

namespace detail {

namespace {

const std::vector<Family>& registry() {
  static const std::vector<Family> all = [] {
    std::vector<Family> out;
    for (auto part : {decay_families(), wsd_families(), stepwise_families(), cyclic_families(), file_families(),
                      combinator_families()})
      out.insert(out.end(), part.begin(), part.end());
    return out;
  }();
  return all;
}

std::string family_names() {
  std::string out;
  for (const auto& f : registry()) out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

const Family& family_of(const std::string& spec, const SpecCall& call) {
  for (const Family& family : registry())
    if (family.name == call.name) return family;
  std::vector<std::string> names;
  for (const auto& family : registry()) names.push_back(family.name);
  const auto meant = closest_name(call.name, names);
  throw SpecError(spec, call.position, call.name,
                  "unknown schedule family" + (meant ? " (did you mean '" + *meant + "'?)" : std::string()) + "; known: " + family_names());
}

void check_call_form(const std::string& spec, const SpecCall& call) {
  const Family& family = family_of(spec, call);
  const Args args(spec, call, family.keys, family.takes_schedules);
  for (const SpecValue* schedule : args.schedules()) check_call_form(spec, *schedule->call);
}

}  // namespace

NodePtr build_call(const std::string& spec, const SpecCall& call, std::optional<int64_t> total) {
  const Family& family = family_of(spec, call);
  const Args args(spec, call, family.keys, family.takes_schedules);
  Context ctx(spec, total);
  MutableNode node = family.build(args, ctx);
  node->set_spec(args.render(ctx.child_specs));
  return node;
}

}  // namespace detail

Schedule parse_schedule(const std::string& spec, std::optional<int64_t> total) {
  if (total && *total < 1)
    throw SpecError(spec, 0, "", "the total number of steps must be at least 1 (got " + std::to_string(*total) + ")");
  const SpecCall call = parse_spec(spec);
  Schedule schedule(detail::build_call(spec, call, total));
  // A schedule with its own length (WSD-S) run for fewer steps would lose its last decay without a word.
  const auto checkpoints = schedule.checkpoints();
  if (total && !checkpoints.empty() && checkpoints.back() > *total)
    throw SpecError(spec, call.position, call.name,
                    "the run of " + std::to_string(*total) + " steps ends before the schedule's last checkpoint at step " +
                        std::to_string(checkpoints.back()) + ": its last decay would be cut off (run at least " +
                        std::to_string(checkpoints.back()) + " steps, or give no total to use its own length)");
  return schedule;
}

void check_spec_form(const std::string& spec) { detail::check_call_form(spec, parse_spec(spec)); }

std::vector<FamilyInfo> schedule_families() {
  std::vector<FamilyInfo> out;
  for (const auto& f : detail::registry()) out.push_back({f.name, f.keys, f.takes_schedules, f.description});
  return out;
}

}  // namespace lrkit::schedules
