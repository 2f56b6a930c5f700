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
  parse_ramp(args, "warmup_init", "warmup_shape", w);
  return w;
}

void parse_ramp(const Args& args, const std::string& init_key, const std::string& shape_key, WarmupSpec& warmup) {
  warmup.init = args.rate(init_key, 0.0);
  const std::string shape = args.word(shape_key, "linear", {"linear", "cosine", "exp", "1-sqrt"});
  warmup.shape = shape == "cosine"   ? WarmupShape::Cosine
                 : shape == "exp"    ? WarmupShape::Exp
                 : shape == "1-sqrt" ? WarmupShape::OneMinusSqrt
                                     : WarmupShape::Linear;
  if (warmup.shape == WarmupShape::Exp && warmup.length > 0 && !(warmup.init > 0))
    args.fail_key(init_key, "an exp warmup starts from " + init_key + " > 0 (got " + format_number(warmup.init) + ")");
}

MutableNode with_warmup(const WarmupSpec& warmup, NodePtr inner) {
  return std::make_shared<WarmupNode>(warmup.length, warmup.init, warmup.shape, std::move(inner));
}

void check_fits(const Args& args, int64_t total, int64_t warmup, int64_t more, const std::string& more_key,
                const std::string& warmup_key) {
  const bool fits = more > 0 ? warmup + more <= total : warmup < total;
  if (!fits) {
    const std::string what = more > 0 ? "warmup (" + std::to_string(warmup) + ") plus " + more_key + " (" +
                                            std::to_string(more) + ") steps exceed"
                                      : "warmup (" + std::to_string(warmup) + " steps) must be shorter than";
    args.fail_key(warmup > 0 ? warmup_key : more_key, what + " the run (" + std::to_string(total) + " steps)");
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
