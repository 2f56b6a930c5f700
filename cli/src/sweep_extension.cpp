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

}  // namespace

bool continues_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now) {
  const auto rest = [](std::vector<std::string> args) {
    args.erase(std::remove_if(args.begin(), args.end(), sets_the_length), args.end());
    return args;
  };
  if (rest(before) != rest(now)) return false;
  const auto steps_before = steps_of(before), steps_now = steps_of(now);
  const auto spec_before = value_of(before, "--schedule.spec="), spec_now = value_of(now, "--schedule.spec=");
  const auto at_before = checkpoints_of(before), at_now = checkpoints_of(now);
  if (!steps_before || !steps_now || *steps_now < *steps_before || !spec_before || !spec_now || !at_before || !at_now)
    return false;
  for (const int64_t step : *at_now)
    if (step < *steps_before && at_before->count(step) == 0) return false;
  try {
    return !train::first_rate_change(*spec_before, *steps_before, *spec_now, *steps_now, *steps_before);
  } catch (const std::exception&) {  // a schedule that cannot be built (a log it refines is gone): no continuation
    return false;
  }
}

}  // namespace lrkit::cli
