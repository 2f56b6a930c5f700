// Keyed, validated access to one spec call's arguments. Every accessor checks
// its rule and throws a SpecError that names the token and the values, so a
// family builder states its rules once and never formats messages itself.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/spec_error.hpp"

namespace lrkit::schedules::detail {

class Args {
 public:
  // `keys` are the family's keys in canonical order; positional arguments fill
  // them in that order. With `takes_schedules`, leading positional calls are
  // sub-schedules instead (combinators).
  Args(const std::string& spec, const SpecCall& call, std::vector<std::string> keys, bool takes_schedules);

  const std::string& name() const { return call_.name; }
  bool has(const std::string& key) const { return find(key) != nullptr; }
  const SpecValue& value(const std::string& key) const;  // must exist
  const std::vector<const SpecValue*>& schedules() const { return schedules_; }

  // A learning rate: finite, >= 0, not a percentage.
  double rate(const std::string& key) const;
  double rate(const std::string& key, double fallback) const;
  // A floor: absolute, or a percentage of `peak`; must not exceed `peak`.
  double floor_of(const std::string& key, double peak, double fallback) const;
  // A plain finite number, optionally bounded (exclusive / inclusive lower bound).
  double real(const std::string& key, double fallback) const;
  double positive(const std::string& key, double fallback) const;
  // A length in steps, or a percentage of `total` (which must then be known).
  int64_t length(const std::string& key, int64_t fallback, std::optional<int64_t> total) const;
  std::optional<int64_t> optional_length(const std::string& key, std::optional<int64_t> total) const;
  std::vector<int64_t> length_list(const std::string& key, std::optional<int64_t> total) const;
  // A word from `allowed`.
  std::string word(const std::string& key, const std::string& fallback,
                   const std::vector<std::string>& allowed) const;
  // Free text (file and dataset names).
  std::string text(const std::string& key, const std::string& fallback) const;
  bool flag(const std::string& key, bool fallback) const;

  // The run length for this call: its own `total` key, else the caller's.
  std::optional<int64_t> total_or(std::optional<int64_t> caller_total) const;
  int64_t require_total(std::optional<int64_t> caller_total) const;

  [[noreturn]] void fail(const SpecValue& at, const std::string& rule) const;
  [[noreturn]] void fail_call(const std::string& rule) const;  // points at the name
  [[noreturn]] void fail_key(const std::string& key, const std::string& rule) const;

  // name(sub-schedules..., key=value, ...) with keys in canonical order.
  std::string render(const std::vector<std::string>& schedule_specs) const;

 private:
  const SpecValue* find(const std::string& key) const;
  const SpecValue& number_value(const std::string& key, bool allow_percent) const;
  int64_t to_length(const SpecValue& v, std::optional<int64_t> total, const std::string& what) const;

  const std::string& spec_;
  const SpecCall& call_;
  std::vector<std::string> keys_;
  std::vector<std::pair<std::string, const SpecValue*>> given_;
  std::vector<const SpecValue*> schedules_;
};

std::string render_value(const SpecValue& value);

}  // namespace lrkit::schedules::detail
