// A configuration schema: every key declared once, with its name
// ("section.key"), help, the field it binds and the rule its value obeys.
// One table drives parsing (INI files and --section.key=value), --help with
// the defaults, validation and the record of the effective values in the run
// log, which parses back into the same config. Values travel as text: numbers
// in their shortest round-trip form, booleans as true/false, choices by name.
#pragma once

#include <charconv>
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/train/config_choice.hpp"

namespace lrkit::train {

template <class Config>
struct ConfigKey {
  std::string name;  // "optim.beta1"
  std::string help;
  std::function<void(Config&, const std::string&)> set;  // parses; throws std::invalid_argument naming the key
  std::function<std::string(const Config&)> get;         // the canonical text, which set() parses back
  std::function<void(const Config&)> check;              // the key's own rule; throws naming the key and value
};

// A rule a value must obey, and how a refusal reads after the key's name.
template <class T>
struct Rule {
  std::function<bool(const T&)> ok;
  std::string says;  // "must be >= 1"
};

template <class T>
Rule<T> at_least(T low) {
  return {[low](const T& v) { return v >= low; }, "must be >= " + schedules::format_number(static_cast<double>(low))};
}
template <class T>
Rule<T> above(T low) {
  return {[low](const T& v) { return v > low; }, "must be > " + schedules::format_number(static_cast<double>(low))};
}
template <class T>
Rule<T> in_range(T low, T high) {  // [low, high]
  return {[=](const T& v) { return v >= low && v <= high; },
          "must be in [" + schedules::format_number(static_cast<double>(low)) + ", " +
              schedules::format_number(static_cast<double>(high)) + "]"};
}
inline Rule<double> in_unit_interval_open_right() {  // [0, 1)
  return {[](const double& v) { return v >= 0 && v < 1; }, "must be in [0, 1)"};
}
inline Rule<double> in_open_range(double low, double high) {  // (low, high)
  return {[=](const double& v) { return v > low && v < high; },
          "must be in (" + schedules::format_number(low) + ", " + schedules::format_number(high) + ")"};
}

namespace config_text {

inline std::string format(const std::string& v) { return v; }
inline std::string format(bool v) { return v ? "true" : "false"; }
inline std::string format(double v) { return schedules::format_number(v); }
inline std::string format(int64_t v) { return std::to_string(v); }
inline std::string format(uint64_t v) { return std::to_string(v); }
template <class E>
std::string format(const Choice<E>& v) {
  return v.text();
}

[[noreturn]] inline void refuse(const std::string& key, const std::string& text, const std::string& what) {
  throw std::invalid_argument(key + " must be " + what + " (got '" + text_for_message(text) + "')");
}

inline void parse(const std::string&, const std::string& text, std::string& out) { out = text; }
inline void parse(const std::string& key, const std::string& text, bool& out) {
  if (text == "true" || text == "1" || text == "yes" || text == "on") {
    out = true;
  } else if (text == "false" || text == "0" || text == "no" || text == "off") {
    out = false;
  } else {
    refuse(key, text, "true or false");
  }
}
inline void parse(const std::string& key, const std::string& text, double& out) {
  const auto v = parse_number(text);
  if (!v) refuse(key, text, "a finite number");
  out = *v;
}
// Digits over the type's whole range (a uint64 seed), else a decimal that is exactly whole (1e4, 2.5e4).
template <class Integer>
void parse_whole(const std::string& key, const std::string& text, Integer& out) {
  const char* first = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(first, text.data() + text.size(), out);
  if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) return;
  const auto whole = parse_integer(text);
  if (!whole || (std::is_unsigned_v<Integer> && *whole < 0))
    refuse(key, text, std::is_signed_v<Integer> ? "a whole number" : "a whole number >= 0");
  out = static_cast<Integer>(*whole);
}
inline void parse(const std::string& key, const std::string& text, int64_t& out) { parse_whole(key, text, out); }
inline void parse(const std::string& key, const std::string& text, uint64_t& out) { parse_whole(key, text, out); }
template <class E>
void parse(const std::string& key, const std::string& text, Choice<E>& out) {
  const Choice<E> parsed(text);
  if (!parsed.valid()) refuse(key, text, Choice<E>::alternatives());
  out = parsed;
}

}  // namespace config_text

// The key `name` bound to the field reached from a Config through `members`
// (&Config::optim, &OptimConfig::beta1), obeying `rule` when given.
template <class Config, class T, class... Members>
ConfigKey<Config> config_key(std::string name, std::string help, Rule<T> rule, Members... members) {
  const auto field = [=](Config& c) -> T& { return (c .* ... .* members); };
  const auto check = [name, rule, field](const Config& c) {
    const T& value = field(const_cast<Config&>(c));
    if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
      if (rule.ok && !rule.ok(value)) throw std::invalid_argument(name + " " + rule.says);
    } else if constexpr (std::is_arithmetic_v<T>) {
      if (rule.ok && !rule.ok(value))
        throw std::invalid_argument(name + " " + rule.says + " (got " + config_text::format(value) + ")");
    } else {  // a Choice
      if (!value.valid()) config_text::refuse(name, value.text(), T::alternatives());
    }
  };
  return {name, std::move(help),
          [name, field, check](Config& c, const std::string& text) {
            config_text::parse(name, text, field(c));
            check(c);
          },
          [field](const Config& c) { return config_text::format(field(const_cast<Config&>(c))); }, check};
}

// A key with no rule of its own: any value of its type (a choice: any of its
// names); its section's validate() or a cross-key rule may still refuse it.
template <class Config, class... Members>
ConfigKey<Config> plain_key(std::string name, std::string help, Members... members) {
  using T = std::remove_reference_t<decltype((std::declval<Config&>() .* ... .* members))>;
  return config_key<Config>(std::move(name), std::move(help), Rule<T>{}, members...);
}

}  // namespace lrkit::train
