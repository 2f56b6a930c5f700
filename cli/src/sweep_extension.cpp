#include "lrkit/cli/sweep_extension.hpp"

#include <algorithm>
#include <optional>
#include <set>

#include "lrkit/common/numbers.hpp"
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

// True when the two argument lists differ in nothing but what sets the length.
bool same_but_the_length(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const auto rest = [](std::vector<std::string> args) {
    args.erase(std::remove_if(args.begin(), args.end(), sets_the_length), args.end());
    return args;
  };
  return rest(a) == rest(b);
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
