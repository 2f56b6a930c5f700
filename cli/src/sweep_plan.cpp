#include "lrkit/cli/sweep_plan.hpp"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>
#include <type_traits>

#include "lrkit/common/closest_name.hpp"
#include "lrkit/common/ini_lines.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/usable_rates.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/train_config.hpp"
#include "lrkit/options/whole_number_option.hpp"

namespace po = boost::program_options;

namespace lrkit::cli {

namespace {

using schedules::format_number;

// The numbers of list `key`'s value `text`; an entry that is none goes to fail(key, message).
template <typename T, class Fail>
std::vector<T> parse_list(const std::string& key, const std::string& text, const Fail& fail) {
  std::vector<T> values;
  for (const auto& item : split_list(text)) {
    std::optional<double> v;
    if constexpr (std::is_integral_v<T>) {
      const auto whole = parse_integer(item);
      if (whole && (std::is_signed_v<T> || *whole >= 0)) v = static_cast<double>(*whole);
    } else {
      v = parse_number(item);
    }
    if (!v)
      fail(key, key + " entry '" + item + "' is not a " +
                    (std::is_integral_v<T> ? (std::is_signed_v<T> ? "whole number" : "whole number >= 0") : "number"));
    values.push_back(static_cast<T>(*v));
  }
  return values;
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size())) s.replace(at, from.size(), to);
}

// Adds `key=value` as the last argument of the spec's outer call.
std::string add_argument(const std::string& spec, const std::string& key, const std::string& value) {
  const auto open = spec.find('('), close = spec.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open)
    throw std::invalid_argument("spec '" + spec + "' is not a call like family(key=value, ...)");
  const bool empty = trim_blanks(spec.substr(open + 1, close - open - 1)).empty();
  return spec.substr(0, close) + (empty ? "" : ", ") + key + "=" + value + spec.substr(close);
}

// `check` of a spec of schedule `s`, its errors naming the schedule and the spec.
template <class Check>
auto checked(const SweepSchedule& s, const std::string& spec, Check check) {
  try {
    return check();
  } catch (const std::exception& e) {
    throw std::invalid_argument("schedule '" + s.name + "' (" + spec + "): " + e.what());
  }
}

// With a total, the run of that many steps it makes: its rates are checked over the run too.
schedules::Schedule parse_for(const SweepSchedule& s, const std::string& spec, std::optional<int64_t> total) {
  return checked(s, spec, [&] {
    auto schedule = schedules::parse_schedule(spec, total);
    if (total) schedules::require_usable_rates(schedule, *total);
    return schedule;
  });
}

// The schedules a spec template names with {run:NAME}, in order.
std::vector<std::string> run_references(const SweepSchedule& s) {
  std::vector<std::string> names;
  for (size_t at = s.spec.find("{run:"); at != std::string::npos; at = s.spec.find("{run:", at + 1)) {
    const auto end = s.spec.find('}', at);
    if (end == std::string::npos) throw std::invalid_argument("schedule '" + s.name + "': '{run:' without its closing '}'");
    names.push_back(s.spec.substr(at + 5, end - at - 5));
  }
  return names;
}

// The schedule whose runs' logs schedule `k` reads ({run:NAME}), if any: one, defined above it, in mode separate,
// whose run at a budget is that budget's whole history.
std::optional<size_t> log_source(const SweepConfig& c, size_t k) {
  const SweepSchedule& s = c.schedules[k];
  const auto names = run_references(s);
  if (names.empty()) return std::nullopt;
  const std::string& name = names.front();
  const auto fail = [&](const std::string& why) {
    throw std::invalid_argument("schedule '" + s.name + "' reads {run:" + name + "}: " + why);
  };
  for (const auto& other : names)
    if (other != name) fail("it also reads {run:" + other + "}, and a run waits for one other run");
  if (s.mode != "separate") fail("only a separate schedule (one run per budget) can read another run's log");
  const auto source = std::find_if(c.schedules.begin(), c.schedules.end(), [&](const SweepSchedule& x) { return x.name == name; });
  if (source == c.schedules.end()) fail("the sweep has no schedule '" + name + "'");
  const auto index = static_cast<size_t>(source - c.schedules.begin());
  if (index >= k) fail("'" + name + "' must be defined above '" + s.name + "' (its runs train first)");
  if (source->mode != "separate")
    fail("'" + name + "' is " + source->mode + ": only a separate run's log holds its budget's whole history");
  return index;
}

}  // namespace

SweepConfig read_sweep_config(const std::string& path) {
  SweepConfig c;
  c.text = read_ini_text(path, "sweep file");
  std::string budgets, peaks, seeds;
  po::options_description keys;
  keys.add_options()("sweep.train_config", po::value(&c.train_config))("sweep.out", po::value(&c.out))(
      "sweep.budgets", po::value(&budgets))("sweep.peaks", po::value(&peaks))("sweep.seeds", po::value(&seeds))(
      "sweep.metric", po::value(&c.metric))("sweep.jobs", options::whole_number(&c.jobs));
  po::variables_map vm;
  std::istringstream parse_from(ini_text_for_parsing(c.text));
  // An error about the `occurrence`-th line that sets `key`: the file and that line.
  const auto fail_at = [&](const std::string& key, const std::string& message, size_t occurrence = 1) {
    throw std::invalid_argument("sweep file " + ini_place(path, ini_line_of_key(c.text, key, occurrence)) + ": " + message);
  };
  std::vector<std::string> train_keys;
  for (const auto& key : train::train_config_schema()) train_keys.push_back(key.name);
  po::parsed_options parsed(&keys);
  try {
    parsed = po::parse_config_file(parse_from, keys, true);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::multiple_occurrences& e) {
    fail_at(e.get_option_name(), e.what(), 2);
  } catch (const po::invalid_config_file_syntax& e) {
    throw std::invalid_argument("sweep file " + ini_place(path, ini_line_of_text(c.text, e.tokens())) + ": " +
                                text_for_message(e.what(), kQuotedLineLimit));
  } catch (const po::validation_error& e) {  // sweep.jobs = abc
    fail_at(e.get_option_name(), e.what());
  } catch (const po::error& e) {
    throw std::invalid_argument("sweep file '" + path + "': " + e.what());
  }
  for (const auto& option : parsed.options) {
    if (!option.unregistered) continue;
    const std::string& key = option.string_key;
    const auto dot = key.find('.');
    const std::string section = key.substr(0, dot == std::string::npos ? 0 : dot);
    const std::string value = option.value.empty() ? "" : option.value.front();
    if (section == "sweep" || section.empty()) {
      std::vector<std::string> names;
      for (const auto& known : keys.options()) names.push_back(known->long_name());
      fail_at(key, "unknown key '" + text_for_message(key) + "'" + ini_did_you_mean(key, names));
    }
    if (section == "schedules") {
      SweepSchedule s;
      s.name = key.substr(dot + 1);
      const size_t occurrence = 1 + static_cast<size_t>(std::count_if(c.schedules.begin(), c.schedules.end(),
                                                                      [&](const SweepSchedule& e) { return e.name == s.name; }));
      if (occurrence > 1) fail_at(key, "schedule '" + s.name + "' is defined twice", occurrence);
      if (s.name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.") != std::string::npos)
        fail_at(key, "schedule name '" + s.name + "' must be letters, digits, '.', '_' and '-'");
      // "MODE: SPEC" where the text before the first ':' is a word; a spec's own ':' ({run:NAME}) is no mode's.
      const auto colon = value.find(':');
      const std::string before = colon == std::string::npos ? "" : trim_blanks(value.substr(0, colon));
      s.spec = trim_blanks(value);
      if (!before.empty() && before.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-") == std::string::npos) {
        s.mode = before;
        s.spec = trim_blanks(value.substr(colon + 1));
      }
      if (s.mode != "separate" && s.mode != "branching" && s.mode != "single")
        fail_at(key, "schedule '" + s.name + "': mode '" + s.mode + "' must be separate, branching or single");
      s.line = ini_line_of_key(c.text, key);
      c.schedules.push_back(s);
      continue;
    }
    for (const char* owned : {"train.steps", "train.seed", "schedule.spec"})
      if (key == owned) fail_at(key, "'" + key + "' is set by the sweep for every run (budgets, seeds, [schedules])");
    // Every run's key, checked here where its line is known (`lrkit train` would name it as an option).
    const auto& schema = train::train_config_schema();
    const auto known = std::find_if(schema.begin(), schema.end(), [&](const auto& k) { return k.name == key; });
    if (known == schema.end()) fail_at(key, "unknown key '" + text_for_message(key) + "'" + ini_did_you_mean(key, train_keys));
    try {
      train::TrainConfig scratch;
      known->set(scratch, value);
    } catch (const std::invalid_argument& e) {
      fail_at(key, e.what());
    }
    c.overrides.push_back("--" + key + "=" + value);
  }
  c.budgets = parse_list<int64_t>("sweep.budgets", budgets, fail_at);
  if (!peaks.empty()) c.peaks = parse_list<double>("sweep.peaks", peaks, fail_at);
  if (!seeds.empty()) c.seeds = parse_list<uint64_t>("sweep.seeds", seeds, fail_at);
  const auto fail = [&](const std::string& message) { throw std::invalid_argument("sweep file '" + path + "': " + message); };
  if (c.budgets.empty()) fail("sweep.budgets is required (e.g. 250, 500, 1000)");
  for (size_t i = 0; i < c.budgets.size(); ++i)
    if (c.budgets[i] < 1 || (i > 0 && c.budgets[i] <= c.budgets[i - 1]))
      fail_at("sweep.budgets", "sweep.budgets must be positive and increasing (entry " + std::to_string(i + 1) + " = " +
                                   std::to_string(c.budgets[i]) + ")");
  if (c.budgets.back() > schedules::kLongestCheckedRun)  // its runs' rates are checked step by step, its forks found so
    fail_at("sweep.budgets", "sweep.budgets entry " + std::to_string(c.budgets.back()) + " is above " +
                                 std::to_string(schedules::kLongestCheckedRun) +
                                 " steps, the most a sweep plans (branching finds each fork step by step)");
  for (double p : c.peaks)
    if (!(p > 0) || !std::isfinite(p)) fail_at("sweep.peaks", "sweep.peaks entries must be > 0 (got " + format_number(p) + ")");
  // A repeated peak or seed names the same run directory twice: it would train once, count twice
  // in the means and, with jobs > 1, start two writers on one directory.
  const auto refuse_repeats = [&](const std::string& key, const auto& values, const auto& show) {
    for (size_t i = 0; i < values.size(); ++i)
      for (size_t j = 0; j < i; ++j)
        if (values[i] == values[j])
          fail_at(key, key + " entry " + std::to_string(i + 1) + " (" + show(values[i]) + ") repeats entry " + std::to_string(j + 1));
  };
  refuse_repeats("sweep.peaks", c.peaks, [](double p) { return format_number(p); });
  refuse_repeats("sweep.seeds", c.seeds, [](uint64_t s) { return std::to_string(s); });
  if (c.schedules.empty()) fail("no schedules: add a [schedules] section with NAME = [MODE:] SPEC lines");
  if (c.jobs < 1 || c.jobs > 256) fail_at("sweep.jobs", "sweep.jobs must be in [1, 256] (got " + std::to_string(c.jobs) + ")");
  if (c.out.empty()) fail_at("sweep.out", "sweep.out is empty");
  c.path = path;
  return c;
}

std::string instantiate_spec(const std::string& spec, int64_t budget, const std::vector<int64_t>& budgets, double peak,
                             uint64_t seed) {
  std::string out = spec;
  std::string list = "[";
  for (size_t i = 0; i < budgets.size(); ++i) list += (i ? ", " : "") + std::to_string(budgets[i]);
  list += "]";
  const bool has_peak_placeholder = out.find("{peak}") != std::string::npos;
  if (!std::isnan(peak)) replace_all(out, "{peak}", format_number(peak));
  replace_all(out, "{budget}", std::to_string(budget));
  replace_all(out, "{budgets}", list);
  replace_all(out, "{seed}", std::to_string(seed));
  if (!std::isnan(peak) && !has_peak_placeholder) out = add_argument(out, "peak", format_number(peak));
  return out;
}

SweepPlan plan_sweep(const SweepConfig& c, uint64_t default_seed) {
  SweepPlan plan;
  const auto runs_dir = std::filesystem::path(c.out) / "runs";
  const std::vector<double> peaks = c.peaks.empty() ? std::vector<double>{std::numeric_limits<double>::quiet_NaN()} : c.peaks;
  const std::vector<uint64_t> seeds = c.seeds.empty() ? std::vector<uint64_t>{default_seed} : c.seeds;
  const int64_t largest = c.budgets.back();
  // Names built from different schedules can meet (single "x_B8" and separate "x" at budget 8).
  std::map<std::string, std::string> directory_owner;
  std::map<std::string, size_t> run_index;
  std::string schedule_name;
  auto add_run = [&](SweepRun run) {
    run_index.emplace(run.name, plan.runs.size());
    const auto [owner, fresh] = directory_owner.emplace(run.name, schedule_name);
    if (!fresh)
      throw std::invalid_argument("schedules '" + owner->second + "' and '" + schedule_name + "' both name run directory '" +
                                  run.name + "'; rename one of them");
    run.args.clear();
    if (!c.train_config.empty()) run.args = {"--config", c.train_config};
    run.args.insert(run.args.end(), c.overrides.begin(), c.overrides.end());
    run.args.push_back("--out=" + (runs_dir / run.name).string());
    run.args.push_back("--train.steps=" + std::to_string(run.steps));
    run.args.push_back("--train.seed=" + std::to_string(run.seed));
    run.args.push_back("--schedule.spec=" + run.schedule_spec);
    run.args.push_back("--resume=auto");
    if (!run.milestones.empty()) {
      std::string at;
      for (auto m : run.milestones) at += (at.empty() ? "" : ",") + std::to_string(m);
      run.args.push_back("--checkpoint.at=" + at);
    }
    if (run.depends_on >= 0)
      run.args.push_back("--branch-from=" + train::checkpoint_path((runs_dir / plan.runs[static_cast<size_t>(run.depends_on)].name).string(), run.start_step));
    plan.runs.push_back(run);
    return plan.runs.size() - 1;
  };
  for (size_t k = 0; k < c.schedules.size(); ++k) {
    const auto& s = c.schedules[k];
    try {
      schedule_name = s.name;
      const auto source = log_source(c, k);
      int64_t trained = 0, separate = 0;
      for (double peak : peaks)
        for (uint64_t seed : seeds) {
          const std::string suffix = (std::isnan(peak) ? "" : "_p" + format_number(peak)) + "_s" + std::to_string(seed);
          auto result = [&](int64_t budget, size_t run, int64_t step, int64_t compute) {
            plan.results.push_back({k, budget, peak, seed, run, step, compute});
            separate += budget;
          };
          if (s.mode == "separate") {
            for (int64_t budget : c.budgets) {
              SweepRun run{s.name + "_B" + std::to_string(budget) + suffix,
                           instantiate_spec(s.spec, budget, c.budgets, peak, seed), budget, 0, seed, {}, -1, {}};
              if (source) {
                const std::string& source_name = c.schedules[*source].name;
                const std::string source_run = source_name + "_B" + std::to_string(budget) + suffix;
                run.reads_log_of = static_cast<int>(run_index.at(source_run));
                replace_all(run.schedule_spec, "{run:" + source_name + "}",
                            schedules::format_word(train::run_log_path((runs_dir / source_run).string())));
                // Built when its run starts, after the run it reads: its values are checked then (the log may not
                // exist yet, or end in a diverged step), its form here.
                checked(s, run.schedule_spec, [&] { schedules::check_spec_form(run.schedule_spec); });
              } else {
                parse_for(s, run.schedule_spec, budget);
              }
              result(budget, add_run(run), budget, budget);
              trained += budget;
            }
          } else if (s.mode == "branching") {
            if (s.spec.find("total=") != std::string::npos)
              throw std::invalid_argument("schedule '" + s.name + "' (branching): remove total=; each branch's length is its budget");
            // The main run: the same schedule stretched so far that it has not started to decay at any fork.
            const auto main_spec = add_argument(instantiate_spec(s.spec, largest, c.budgets, peak, seed), "total",
                                                std::to_string(schedules::main_run_length(largest)));
            const auto main = parse_for(s, main_spec, std::nullopt);
            std::vector<std::pair<std::string, int64_t>> branches;  // spec, fork step
            for (int64_t budget : c.budgets) {
              const auto spec = instantiate_spec(s.spec, budget, c.budgets, peak, seed);
              const auto branch = parse_for(s, spec, budget);
              const auto fork = schedules::fork_step(main, branch, budget);
              if (!fork)
                throw std::invalid_argument("schedule '" + s.name + "' (branching): at budget " + std::to_string(budget) +
                                            " it never departs from the main run (it does not decay); use mode separate");
              branches.push_back({spec, *fork});
            }
            std::set<int64_t> forks;
            for (const auto& b : branches)
              if (b.second > 0) forks.insert(b.second);
            int main_run = -1;
            if (!forks.empty()) {
              main_run = static_cast<int>(add_run({s.name + "_main" + suffix, main_spec, *forks.rbegin(), 0, seed,
                                                    std::vector<int64_t>(forks.begin(), forks.end()), -1, {}}));
              trained += *forks.rbegin();
            }
            for (size_t i = 0; i < branches.size(); ++i) {
              const auto [spec, fork] = branches[i];
              const int64_t budget = c.budgets[i];
              const auto run = add_run({s.name + "_B" + std::to_string(budget) + suffix, spec, budget, fork, seed, {},
                                        fork > 0 ? main_run : -1, {}});
              result(budget, run, budget, budget);
              trained += budget - fork;
            }
          } else {  // single
            const auto spec = instantiate_spec(s.spec, largest, c.budgets, peak, seed);
            std::optional<schedules::Schedule> schedule;
            try {
              schedule.emplace(schedules::parse_schedule(spec));  // its own length (wsds), if it has one
            } catch (const std::exception&) {
              schedule.emplace(parse_for(s, spec, largest));
            }
            auto milestones = schedule->checkpoints();
            if (milestones.empty()) milestones = c.budgets;
            if (milestones.size() != c.budgets.size())
              throw std::invalid_argument("schedule '" + s.name + "' (single): it has " + std::to_string(milestones.size()) +
                                          " checkpoints for " + std::to_string(c.budgets.size()) + " budgets (use budgets={budgets})");
            if (schedule->bounded() && schedule->total() < milestones.back())
              throw std::invalid_argument("schedule '" + s.name + "' (single): it ends at step " + std::to_string(schedule->total()) +
                                          ", before its last milestone " + std::to_string(milestones.back()));
            const int64_t steps = schedule->bounded() ? schedule->total() : largest;
            checked(s, spec, [&] { schedules::require_usable_rates(*schedule, steps); });
            const auto run = add_run({s.name + suffix, spec, steps, 0, seed, milestones, -1, {}});
            for (size_t i = 0; i < milestones.size(); ++i) result(c.budgets[i], run, milestones[i], milestones[i]);
            trained += steps;
          }
        }
      plan.schedule_steps.push_back(trained);
      plan.separate_steps.push_back(separate);
    } catch (const std::invalid_argument& e) {
      if (c.path.empty()) throw;
      throw std::invalid_argument("sweep file " + ini_place(c.path, s.line) + ": " + e.what());
    }
  }
  return plan;
}

}  // namespace lrkit::cli
