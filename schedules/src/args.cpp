#include "args.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "lrkit/common/closest_name.hpp"

namespace lrkit::schedules::detail {

namespace {

std::string join_words(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : ", ") + w;
  return out;
}

std::string num(double v) { return format_number(v); }

}  // namespace

Args::Args(const std::string& spec, const SpecCall& call, std::vector<std::string> keys, bool takes_schedules)
    : spec_(spec), call_(call), keys_(std::move(keys)) {
  size_t next_positional = 0;
  bool seen_keyword = false;
  for (const SpecArg& arg : call_.args) {
    if (arg.key.empty()) {
      if (seen_keyword) fail(arg.value, "positional argument after keyword arguments");
      if (takes_schedules && arg.value.kind == SpecValue::Kind::Call && next_positional == 0) {
        schedules_.push_back(&arg.value);
        continue;
      }
      if (next_positional >= keys_.size())
        fail(arg.value, call_.name + " takes at most " + std::to_string(keys_.size()) +
                            " positional arguments (" + join_words(keys_) + ")");
      const std::string& key = keys_[next_positional++];
      if (find(key)) fail(arg.value, "'" + key + "' given twice");
      given_.emplace_back(key, &arg.value);
      continue;
    }
    seen_keyword = true;
    if (std::find(keys_.begin(), keys_.end(), arg.key) == keys_.end()) {
      const auto meant = closest_name(arg.key, keys_);
      throw SpecError(spec_, arg.key_position, arg.key,
                      "unknown key for " + call_.name + (meant ? " (did you mean '" + *meant + "'?)" : "") +
                          "; expected one of: " + join_words(keys_));
    }
    if (find(arg.key)) throw SpecError(spec_, arg.key_position, arg.key, "'" + arg.key + "' given twice");
    given_.emplace_back(arg.key, &arg.value);
  }
  for (const auto& [key, value] : given_)
    if (value->kind == SpecValue::Kind::Call)
      fail(*value, "'" + key + "' takes a value, not a schedule");
}

const SpecValue* Args::find(const std::string& key) const {
  for (const auto& [k, v] : given_)
    if (k == key) return v;
  return nullptr;
}

const SpecValue& Args::value(const std::string& key) const {
  const SpecValue* v = find(key);
  if (!v) fail_call(call_.name + " needs '" + key + "'");
  return *v;
}

void Args::fail(const SpecValue& at, const std::string& rule) const {
  throw SpecError(spec_, at.position, at.text, rule);
}

void Args::fail_call(const std::string& rule) const {
  throw SpecError(spec_, call_.position, call_.name, rule);
}

void Args::fail_key(const std::string& key, const std::string& rule) const {
  if (const SpecValue* v = find(key)) fail(*v, rule);
  fail_call(rule);
}

const SpecValue& Args::number_value(const std::string& key, bool allow_percent) const {
  const SpecValue& v = value(key);
  if (v.kind != SpecValue::Kind::Number) fail(v, "'" + key + "' must be a number");
  if (v.percent && !allow_percent) fail(v, "'" + key + "' cannot be a percentage");
  return v;
}

double Args::rate(const std::string& key) const {
  const SpecValue& v = number_value(key, false);
  if (v.number < 0) fail(v, "learning rate '" + key + "' must be >= 0 (got " + num(v.number) + ")");
  return v.number;
}

double Args::rate(const std::string& key, double fallback) const { return has(key) ? rate(key) : fallback; }

double Args::floor_of(const std::string& key, double peak, double fallback) const {
  if (!has(key)) return fallback;
  const SpecValue& v = number_value(key, true);
  const double value = v.percent ? peak * v.number / 100.0 : v.number;
  if (value < 0) fail(v, "'" + key + "' must be >= 0 (got " + num(value) + ")");
  if (value > peak)
    fail(v, "'" + key + "' (" + num(value) + ") must not exceed the peak (" + num(peak) + ")");
  return value;
}

double Args::real(const std::string& key, double fallback) const {
  return has(key) ? number_value(key, false).number : fallback;
}

double Args::positive(const std::string& key, double fallback) const {
  if (!has(key)) return fallback;
  const SpecValue& v = number_value(key, false);
  if (!(v.number > 0)) fail(v, "'" + key + "' must be > 0 (got " + num(v.number) + ")");
  return v.number;
}

int64_t Args::to_length(const SpecValue& v, std::optional<int64_t> total, const std::string& what) const {
  if (v.kind != SpecValue::Kind::Number) fail(v, what + " must be a number of steps or a percentage");
  if (v.number < 0) fail(v, what + " must be >= 0 (got " + num(v.number) + ")");
  if (v.percent) {
    if (!total || *total == kUnbounded)
      fail(v, what + " is a percentage, so the total number of steps must be known (give --steps or total=)");
    if (v.number > 100) fail(v, what + " is more than 100% of the run");
    return std::llround(static_cast<double>(*total) * v.number / 100.0);
  }
  if (v.number != std::floor(v.number)) {
    // 0.1 is how many trainers write "a tenth of the run" (warmup_ratio); lrkit spells that 10%.
    // Ten digits drop the binary noise of the product (0.07 * 100 = 7.000000000000001).
    char percent[32];
    std::snprintf(percent, sizeof percent, "%.10g%%", v.number * 100);
    const std::string fraction_hint = v.number < 1 ? std::string("; a fraction of the run is a percentage: ") + percent : "";
    fail(v, what + " in steps must be a whole number (got " + num(v.number) + ")" + fraction_hint);
  }
  if (v.number > 1e15) fail(v, what + " is too large (got " + num(v.number) + ")");
  return static_cast<int64_t>(v.number);
}

int64_t Args::length(const std::string& key, int64_t fallback, std::optional<int64_t> total) const {
  return has(key) ? to_length(value(key), total, "'" + key + "'") : fallback;
}

std::optional<int64_t> Args::optional_length(const std::string& key, std::optional<int64_t> total) const {
  if (!has(key)) return std::nullopt;
  return to_length(value(key), total, "'" + key + "'");
}

std::vector<int64_t> Args::length_list(const std::string& key, std::optional<int64_t> total) const {
  const SpecValue& v = value(key);
  if (v.kind != SpecValue::Kind::List) fail(v, "'" + key + "' must be a list such as [100, 200]");
  std::vector<int64_t> out;
  for (const SpecValue& item : v.items) out.push_back(to_length(item, total, "each entry of '" + key + "'"));
  return out;
}

std::string Args::word(const std::string& key, const std::string& fallback,
                       const std::vector<std::string>& allowed) const {
  if (!has(key)) return fallback;
  const SpecValue& v = value(key);
  const std::string text = v.kind == SpecValue::Kind::Word ? v.text : "";
  if (std::find(allowed.begin(), allowed.end(), text) == allowed.end())
    fail(v, "'" + key + "' must be one of: " + join_words(allowed));
  return text;
}

std::string Args::text(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const SpecValue& v = value(key);
  if (v.kind != SpecValue::Kind::Word) fail(v, "'" + key + "' must be a name or a quoted path");
  return v.text;
}

bool Args::flag(const std::string& key, bool fallback) const {
  return has(key) ? word(key, "", {"true", "false"}) == "true" : fallback;
}

std::optional<int64_t> Args::total_or(std::optional<int64_t> caller_total) const {
  if (!has("total")) return caller_total;
  const int64_t total = to_length(value("total"), caller_total, "'total'");
  if (total < 1) fail(value("total"), "'total' must be at least 1 step");
  return total;
}

int64_t Args::require_total(std::optional<int64_t> caller_total) const {
  const auto total = total_or(caller_total);
  if (!total || *total == kUnbounded)
    fail_call(call_.name + " needs the total number of steps: the run's length (lrkit schedule --steps, train.steps, "
              "Python's total_steps) or total= in the spec");
  if (*total < 1) fail_call(call_.name + " needs a run of at least 1 step (got " + std::to_string(*total) + ")");
  return *total;
}

std::string render_value(const SpecValue& value) {
  switch (value.kind) {
    case SpecValue::Kind::Number: return format_number(value.number) + (value.percent ? "%" : "");
    case SpecValue::Kind::Word: return format_word(value.text);
    case SpecValue::Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < value.items.size(); ++i) out += (i ? ", " : "") + render_value(value.items[i]);
      return out + "]";
    }
    case SpecValue::Kind::Call: break;
  }
  return value.text;
}

std::string Args::render(const std::vector<std::string>& schedule_specs) const {
  std::string out = call_.name + "(";
  bool first = true;
  for (const auto& s : schedule_specs) {
    out += (first ? "" : ", ") + s;
    first = false;
  }
  for (const auto& key : keys_) {
    if (const SpecValue* v = find(key)) {
      out += (first ? "" : ", ") + key + "=" + render_value(*v);
      first = false;
    }
  }
  return out + ")";
}

}  // namespace lrkit::schedules::detail
