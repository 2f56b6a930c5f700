// What every family builder shares: the build context (spec text, caller's
// total, nested schedules), the warmup keys, and decay-shape parsing.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../args.hpp"
#include "../nodes.hpp"

namespace lrkit::schedules::detail {

class Context {
 public:
  Context(const std::string& spec_text, std::optional<int64_t> caller_total) : spec(spec_text), total(caller_total) {}
  // Builds a nested schedule and remembers its canonical spec for rendering.
  NodePtr child(const SpecValue& call, std::optional<int64_t> child_total);

  const std::string& spec;
  std::optional<int64_t> total;
  std::vector<std::string> child_specs;
};

using MutableNode = std::shared_ptr<ScheduleNode>;
using Builder = MutableNode (*)(const Args&, Context&);

struct Family {
  std::string name;
  std::vector<std::string> keys;  // canonical and positional order
  bool takes_schedules;
  Builder build;
  std::string description;
};

// Phases a family of many short cycles lists before it ends its list with one Cycle phase to the end of the run
// (summaries of long runs stay bounded).
constexpr size_t kMaxListedCycles = 4096;

// Builds any call (used for the root and for nested schedules).
NodePtr build_call(const std::string& spec, const SpecCall& call, std::optional<int64_t> total);

// Keys `warmup`, `warmup_init`, `warmup_shape` (linear|cosine|exp|1-sqrt).
extern const std::vector<std::string> kWarmupKeys;
std::vector<std::string> with_keys(std::vector<std::string> keys, const std::vector<std::string>& more);

struct WarmupSpec {
  int64_t length = 0;
  double init = 0.0;
  WarmupShape shape = WarmupShape::Linear;
};
WarmupSpec parse_warmup(const Args& args, std::optional<int64_t> total, int64_t fallback_length = 0);
// The ramp's start value and shape under the given keys (the combinator names them init/shape).
void parse_ramp(const Args& args, const std::string& init_key, const std::string& shape_key, WarmupSpec& warmup);
MutableNode with_warmup(const WarmupSpec& warmup, NodePtr inner);
// Validates that warmup (plus `more` steps of other phases) fits in the run; an error points at `warmup_key`'s
// value (the combinator names it length) or, with no warmup, at `more_key`'s.
void check_fits(const Args& args, int64_t total, int64_t warmup, int64_t more, const std::string& more_key,
                const std::string& warmup_key = "warmup");

// round(fraction * total): default lengths such as "20% of the run".
int64_t fraction_of(int64_t total, double fraction);

DecayShape parse_shape(const Args& args, const std::string& key, DecayShape fallback);
// Floor rules of a shape: inverse and geometric need floor > 0.
void check_shape_floor(const Args& args, DecayShape shape, double floor);

// Family tables, one per source file.
std::vector<Family> decay_families();
std::vector<Family> wsd_families();
std::vector<Family> stepwise_families();
std::vector<Family> cyclic_families();
std::vector<Family> file_families();
std::vector<Family> combinator_families();

}  // namespace lrkit::schedules::detail
