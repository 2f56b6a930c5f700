#include "lrkit/cli/sweep_extension.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "lrkit/common/numbers.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/trained_schedule.hpp"

namespace lrkit::cli {

namespace {

const char* const kLength[] = {"--train.steps=", "--schedule.spec=", "--checkpoint.at="};

bool sets_the_length(const std::string& arg) {
  return std::any_of(std::begin(kLength), std::end(kLength), [&](const char* key) { return arg.rfind(key, 0) == 0; });
}

// The value of the last "--key=value" among `args`.
std::optional<std::string> value_of(const std::vector<std::string>& args, const std::string& key) {
  for (auto a = args.rbegin(); a != args.rend(); ++a)
    if (a->rfind(key, 0) == 0) return a->substr(key.size());
  return std::nullopt;
}

std::optional<int64_t> steps_of(const std::vector<std::string>& args) {
  const auto text = value_of(args, "--train.steps=");
  const auto steps = text ? parse_integer(*text) : std::nullopt;
  return steps && *steps > 0 ? steps : std::nullopt;
}

// --checkpoint.at's steps ("17,33"); a text that is no list of whole numbers gives nothing.
std::optional<std::set<int64_t>> checkpoints_of(const std::vector<std::string>& args) {
  std::set<int64_t> steps;
  const auto text = value_of(args, "--checkpoint.at=");
  if (!text) return steps;
  for (const auto& item : split_list(*text)) {
    const auto step = parse_integer(item);
    if (!step) return std::nullopt;
    steps.insert(*step);
  }
  return steps;
}

// What sets a run's length and rates, read from its arguments; nothing where one cannot be read.
struct RunLength {
  int64_t steps;
  std::string spec;
  std::set<int64_t> checkpoints;
};

std::optional<RunLength> length_of(const std::vector<std::string>& args) {
  const auto steps = steps_of(args);
  const auto spec = value_of(args, "--schedule.spec=");
  const auto at = checkpoints_of(args);
  if (!steps || !spec || !at) return std::nullopt;
  return RunLength{*steps, *spec, *at};
}

// The key of a "--key=value" argument a sweep writes, where it is one that changes no result; nothing otherwise.
std::optional<std::string> result_free_key(const std::string& arg) {
  const auto equals = arg.find('=');
  if (arg.rfind("--", 0) != 0 || equals == std::string::npos) return std::nullopt;
  std::string key = arg.substr(2, equals - 2);
  return train::changes_no_result(key) ? std::optional<std::string>(key) : std::nullopt;
}

std::vector<std::string> without(std::vector<std::string> args, bool (*drop)(const std::string&)) {
  args.erase(std::remove_if(args.begin(), args.end(), drop), args.end());
  return args;
}

bool is_result_free(const std::string& arg) { return result_free_key(arg).has_value(); }

bool is_result_free_or_the_length(const std::string& arg) { return is_result_free(arg) || sets_the_length(arg); }

// True when the two argument lists differ in nothing but what sets the length and what changes no result.
bool same_but_the_length(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return without(a, is_result_free_or_the_length) == without(b, is_result_free_or_the_length);
}

// The result-free keys' values among `args`, the last of each.
std::map<std::string, std::string> result_free_values(const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  for (const auto& arg : args)
    if (const auto key = result_free_key(arg)) values[*key] = arg.substr(key->size() + 3);
  return values;
}

// True when the first `updates` updates take the same rates under both.
bool same_rates(const RunLength& a, const RunLength& b, int64_t updates) {
  try {
    return !train::first_rate_change(a.spec, a.steps, b.spec, b.steps, updates);
  } catch (const std::exception&) {  // a schedule that cannot be built (a log it refines is gone): no agreement
    return false;
  }
}

}  // namespace

bool the_same_run(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  return without(before, is_result_free) == without(now, is_result_free);
}

std::string result_free_changes(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  const auto was = result_free_values(before), is = result_free_values(now);
  std::set<std::string> keys;
  for (const auto* values : {&was, &is})
    for (const auto& [key, value] : *values) keys.insert(key);
  const auto shown = [](const std::map<std::string, std::string>& values, const std::string& key) {
    const auto it = values.find(key);
    return it == values.end() ? std::string("(unset)") : it->second;
  };
  std::string changes;
  for (const auto& key : keys)
    if (shown(was, key) != shown(is, key))
      changes += (changes.empty() ? "" : "; ") + key + " = " + shown(was, key) + " -> " + shown(is, key);
  return changes;
}

bool continues_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  if (!same_but_the_length(before, now)) return false;
  const auto was = length_of(before), is = length_of(now);
  if (!was || !is || is->steps < was->steps) return false;
  for (const int64_t step : is->checkpoints)
    if (step < was->steps && was->checkpoints.count(step) == 0) return false;
  return same_rates(*was, *is, was->steps);
}

bool holds_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  if (!same_but_the_length(before, now)) return false;
  const auto was = length_of(before), is = length_of(now);
  if (!was || !is || is->steps > was->steps) return false;
  // Its last step too: the checkpoint there shows the run got so far, and a pinned one is never pruned.
  if (is->steps < was->steps && was->checkpoints.count(is->steps) == 0) return false;
  for (const int64_t step : is->checkpoints)
    if (was->checkpoints.count(step) == 0) return false;
  return same_rates(*was, *is, is->steps);
}

}  // namespace lrkit::cli
