#include "common.hpp"

#include <cmath>

namespace lrkit::schedules::detail {

const std::vector<std::string> kWarmupKeys = {"warmup", "warmup_init", "warmup_shape"};

std::vector<std::string> with_keys(std::vector<std::string> keys, const std::vector<std::string>& more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

NodePtr Context::child(const SpecValue& call, std::optional<int64_t> child_total) {
  NodePtr node = build_call(spec, *call.call, child_total);
  child_specs.push_back(node->spec());
  return node;
}

WarmupSpec parse_warmup(const Args& args, std::optional<int64_t> total, int64_t fallback_length) {
  WarmupSpec w;
  w.length = args.length("warmup", fallback_length, total);
  w.init = args.rate("warmup_init", 0.0);
  const std::string shape = args.word("warmup_shape", "linear", {"linear", "cosine", "exp"});
  w.shape = shape == "cosine" ? WarmupShape::Cosine : shape == "exp" ? WarmupShape::Exp : WarmupShape::Linear;
  if (w.shape == WarmupShape::Exp && w.length > 0 && !(w.init > 0))
    args.fail_key("warmup_init", "an exp warmup starts from warmup_init > 0 (got " + format_number(w.init) + ")");
  return w;
}

MutableNode with_warmup(const WarmupSpec& warmup, NodePtr inner) {
  return std::make_shared<WarmupNode>(warmup.length, warmup.init, warmup.shape, std::move(inner));
}

void check_fits(const Args& args, int64_t total, int64_t warmup, int64_t more, const std::string& more_key) {
  const bool fits = more > 0 ? warmup + more <= total : warmup < total;
  if (!fits) {
    const std::string what = more > 0 ? "warmup (" + std::to_string(warmup) + ") plus " + more_key + " (" +
                                            std::to_string(more) + ") steps exceed"
                                      : "warmup (" + std::to_string(warmup) + " steps) must be shorter than";
    args.fail_key(warmup > 0 ? "warmup" : more_key, what + " the run (" + std::to_string(total) + " steps)");
  }
}

int64_t fraction_of(int64_t total, double fraction) {
  return std::llround(static_cast<double>(total) * fraction);
}

DecayShape parse_shape(const Args& args, const std::string& key, DecayShape fallback) {
  return *decay_shape_from_name(args.word(key, decay_shape_name(fallback), decay_shape_names()));
}

void check_shape_floor(const Args& args, DecayShape shape, double floor) {
  if (decay_shape_needs_positive_floor(shape) && !(floor > 0))
    args.fail_key("floor", std::string("the ") + decay_shape_name(shape) +
                               " shape needs floor > 0 (got " + format_number(floor) + ")");
}

}  // namespace lrkit::schedules::detail
