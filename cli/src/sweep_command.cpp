// `lrkit sweep --config SWEEP.cfg`: a budgeted-iteration sweep (sweep_plan.hpp),
// its runs started by sweep_runner, one summary HDF5 and a printed table.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <limits>
#include <map>
#include <optional>

#include "command.hpp"
#include "run_directory.hpp"
#include "sweep_runner.hpp"
#include "lrkit/cli/sweep_plan.hpp"
#include "lrkit/common/ini_lines.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/memory_need.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/stray_arguments.hpp"
#include "lrkit/train/train_config.hpp"
#include "lrkit/options/whole_number_option.hpp"
#include "lrkit/train/worker_threads.hpp"

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace lrkit::cli {

namespace {

// The metric's eval loss at `step` in a run's log (NaN when the run has none there).
double eval_loss_at(const std::string& log, const std::string& metric, int64_t step) {
  if (!h5::is_hdf5_file(log) || !h5::has_dataset(log, "/eval/" + metric + "/step")) return std::nan("");
  const auto steps = h5::read_series(log, "/eval/" + metric + "/step");
  const auto losses = h5::read_series(log, "/eval/" + metric + "/loss");
  double loss = std::nan("");
  for (size_t i = 0; i < steps.size() && i < losses.size(); ++i)
    if (steps[i] == static_cast<double>(step)) loss = losses[i];
  return loss;
}

// What a run took, from its log's per-step wall clock: one row per step it computed (a branch's log starts at its
// fork; a diverged run's ends at the step that diverged) and the seconds at the last, up to the run's `steps` (a
// longer run, trained when the sweep asked for more budgets, stands for it).
struct RunCost {
  int64_t steps = 0;
  double seconds = 0.0;
};

RunCost run_cost(const std::string& log, int64_t steps) {
  if (!h5::is_hdf5_file(log) || !h5::has_dataset(log, "/train/wall_s")) return {};
  const auto wall = h5::read_series(log, "/train/wall_s");
  const auto step = h5::read_series(log, "/train/step");
  RunCost cost;
  for (size_t i = 0; i < wall.size() && i < step.size() && step[i] < static_cast<double>(steps); ++i)
    cost = {static_cast<int64_t>(i) + 1, wall[i]};
  return cost;
}

// Per schedule, what its runs took: a run is counted once however many results it gives (a WSD-S run, a branches'
// main run).
struct ScheduleCost {
  std::vector<int64_t> trained_steps;
  std::vector<double> wall_s;
};

ScheduleCost schedule_costs(const SweepConfig& sweep, const SweepPlan& plan) {
  ScheduleCost cost{std::vector<int64_t>(sweep.schedules.size(), 0), std::vector<double>(sweep.schedules.size(), 0.0)};
  std::vector<bool> counted(plan.runs.size(), false);
  for (const auto& r : plan.results) {
    for (int run = static_cast<int>(r.run); run >= 0 && !counted[static_cast<size_t>(run)]; run = plan.runs[static_cast<size_t>(run)].depends_on) {
      counted[static_cast<size_t>(run)] = true;
      const auto log = train::run_log_path(run_directory(sweep.out, plan.runs[static_cast<size_t>(run)].name));
      const RunCost run_took = run_cost(log, plan.runs[static_cast<size_t>(run)].steps);
      cost.trained_steps[r.schedule] += run_took.steps;
      cost.wall_s[r.schedule] += run_took.seconds;
    }
  }
  return cost;
}

std::string format(double v, const char* pattern = "%.4f") {
  if (std::isnan(v)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, pattern, v);
  return buf;
}

// A result's loss: +inf marks a run that diverged before the result's step.
std::string format_loss(double loss) { return loss == std::numeric_limits<double>::infinity() ? "diverged" : format(loss); }

// Every `lrkit train` argument list must parse; the metric must be an eval set. Returns the runs' shared
// configuration (model, batch, data, workers).
train::TrainConfig check_runs(const SweepConfig& sweep) {
  train::TrainConfig base;
  std::string help;
  std::vector<std::string> args;
  if (!sweep.train_config.empty()) args = {"--config", sweep.train_config};
  args.insert(args.end(), sweep.overrides.begin(), sweep.overrides.end());
  // An error about keys the sweep file sets names their lines there.
  const auto placed = [&](const std::vector<size_t>& lines, const std::string& message) {
    return UsageError((lines.empty() ? "" : "sweep file " + ini_place(sweep.path, lines) + ": ") + message);
  };
  try {
    train::parse_train_config(args, base, help);
  } catch (const std::invalid_argument& e) {
    // A rule across keys the sweep file sets for every run ([train] batch = 30, accumulation = 4).
    std::vector<std::string> sweep_keys;
    for (const auto& o : sweep.overrides) sweep_keys.push_back(o.substr(2, o.find('=') - 2));  // "--section.key=value"
    throw placed(ini_lines_of_keys_named(sweep.text, e.what(), sweep_keys), "the runs' configuration: " + std::string(e.what()));
  }
  bool metric_found = false;
  for (const auto& set : base.eval_sets()) metric_found |= set.name == sweep.metric;
  if (!metric_found) {
    std::vector<size_t> lines;
    for (const char* key : {"sweep.metric", "eval.sets"})
      if (const auto line = ini_line_of_key(sweep.text, key)) lines.push_back(*line);
    // eval.sets from the runs' train_config file: its line there too (the sweep file's lines lead the message).
    std::string sets_place;
    const auto& from_file = base.keys_from_config_file;
    if (std::find(from_file.begin(), from_file.end(), "eval.sets") != from_file.end())
      sets_place = ", set in config file " + ini_place(base.config_file, ini_line_of_key(base.config_text, "eval.sets"));
    throw placed(lines, "sweep.metric '" + sweep.metric + "' is not one of the runs' eval.sets ('" + base.eval.sets + "'" +
                            sets_place + ")");
  }
  try {  // once here, not once per run
    base.check_data_files();
  } catch (const train::CorpusError& e) {
    throw UsageError(std::string("the runs' ") + e.what());
  }
  return base;
}

// The runs share one model and batch: `at_once` of them at a time must fit in the memory, or the kernel kills
// them while they build their weights.
void check_memory(const train::TrainConfig& base, int64_t at_once) {
  try {
    base.validate_world(base.nproc);
    train::require_memory(base, base.nproc, static_cast<int>(at_once * base.nproc));
  } catch (const std::invalid_argument& e) {
    throw UsageError("the runs' configuration, " + std::to_string(at_once) + " run(s) at a time (sweep.jobs, --jobs) of " +
                     std::to_string(base.nproc) + " worker(s) each: " + e.what());
  }
}

void write_summary(const std::string& path, const SweepConfig& sweep, const SweepPlan& plan, const std::vector<double>& losses,
                   const ScheduleCost& cost) {
  h5::write_file_atomically(path, [&](h5::Writer& out) {
    std::vector<int64_t> schedule, budget, seed, step, compute;
    std::vector<double> peak;
    for (const auto& r : plan.results) {
      schedule.push_back(static_cast<int64_t>(r.schedule));
      budget.push_back(r.budget);
      peak.push_back(r.peak);
      seed.push_back(static_cast<int64_t>(r.seed));
      step.push_back(r.step);
      compute.push_back(r.compute);
    }
    out.write_series("/results/schedule", schedule);
    out.write_series("/results/budget", budget);
    out.write_series("/results/peak", peak);
    out.write_series("/results/seed", seed);
    out.write_series("/results/step", step);
    out.write_series("/results/compute", compute);
    out.write_series("/results/loss", losses);
    out.write_series("/schedules/trained_steps", cost.trained_steps);
    out.write_series("/schedules/planned_steps", plan.schedule_steps);
    out.write_series("/schedules/separate_steps", plan.separate_steps);
    out.write_series("/schedules/wall_s", cost.wall_s);
    std::vector<std::string> names, modes, specs, runs;  // one entry per schedule / per result row
    for (const auto& s : sweep.schedules) {
      names.push_back(s.name);
      modes.push_back(s.mode);
      specs.push_back(s.spec);
    }
    for (const auto& r : plan.results) runs.push_back(plan.runs[r.run].name);
    out.set_attribute("/schedules", "names", names);
    out.set_attribute("/schedules", "modes", modes);
    out.set_attribute("/schedules", "specs", specs);
    out.set_attribute("/results", "runs", runs);
    out.set_attribute("/", "metric", sweep.metric);
    out.set_attribute("/", "sweep_config", sweep.text);
  });
}

void print_tables(std::ostream& os, const SweepConfig& sweep, const SweepPlan& plan, const std::vector<double>& losses,
                  const ScheduleCost& cost) {
  // Per (schedule, budget): the best peak's mean loss over seeds.
  std::map<std::pair<size_t, int64_t>, std::map<double, std::pair<double, int>>> by_peak;
  for (size_t i = 0; i < plan.results.size(); ++i) {
    const auto& r = plan.results[i];
    auto& cell = by_peak[{r.schedule, r.budget}][std::isnan(r.peak) ? -1.0 : r.peak];
    cell.first += losses[i];
    cell.second += 1;
  }
  const bool several_peaks = sweep.peaks.size() > 1;
  os << "\n" << sweep.metric << " loss per budget (mean over " << std::max<size_t>(sweep.seeds.size(), 1) << " seed(s)"
     << (several_peaks ? ", best peak in brackets" : "") << "):\n| budget |";
  for (const auto& s : sweep.schedules) os << " " << s.name << " |";
  os << " best |\n| ---: |";
  for (size_t k = 0; k < sweep.schedules.size(); ++k) os << " ---: |";
  os << " --- |\n";
  for (int64_t budget : sweep.budgets) {
    os << "| " << budget << " |";
    double best = std::numeric_limits<double>::infinity();
    std::string best_name = "-";
    for (size_t k = 0; k < sweep.schedules.size(); ++k) {
      double loss = std::nan("");
      double at_peak = 0;
      for (const auto& [peak, cell] : by_peak[{k, budget}]) {
        const double mean = cell.first / cell.second;
        if (std::isnan(loss) || mean < loss) {
          loss = mean;
          at_peak = peak;
        }
      }
      os << " " << format_loss(loss) << (several_peaks && std::isfinite(loss) ? " (" + format(at_peak, "%.3g") + ")" : "") << " |";
      if (loss < best) {
        best = loss;
        best_name = sweep.schedules[k].name;
      }
    }
    os << " " << best_name << " |\n";
  }
  // Trained: what the logs hold (fewer than planned where runs diverged or failed); the ratio is the mode's own.
  os << "\ncompute per schedule (optimizer steps, all peaks and seeds):\n"
     << "| schedule | mode | steps trained | planned | separate runs would train | planned / separate | wall s |\n"
     << "| --- | --- | ---: | ---: | ---: | ---: | ---: |\n";
  for (size_t k = 0; k < sweep.schedules.size(); ++k)
    os << "| " << sweep.schedules[k].name << " | " << sweep.schedules[k].mode << " | " << cost.trained_steps[k] << " | "
       << plan.schedule_steps[k] << " | " << plan.separate_steps[k] << " | "
       << format(static_cast<double>(plan.schedule_steps[k]) / static_cast<double>(plan.separate_steps[k]), "%.3f") << " | "
       << format(cost.wall_s[k], "%.0f") << " |\n";
}

}  // namespace

int run_sweep_command(const std::vector<std::string>& args) {
  po::options_description options("options");
  std::string config_path;
  std::optional<int64_t> jobs;
  options.add_options()("help,h", "show this help")("config,c", po::value(&config_path), "sweep file (INI)")(
      "jobs,j", options::whole_number(&jobs), "runs at a time (overrides sweep.jobs)")("dry-run", "print the planned runs and stop");
  po::variables_map vm;
  try {
    const auto parsed = po::command_line_parser(args).options(options).run();
    if (const auto stray = train::stray_argument_message(parsed, "sweep", "the sweep file is --config FILE"); !stray.empty())
      throw UsageError(stray);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw option_error(e, options, "sweep");
  }
  if (vm.count("help")) {
    std::cout << "usage: lrkit sweep --config SWEEP.cfg [--jobs N] [--dry-run]\n\n"
                 "Trains every schedule of the sweep file at every budget, peak and seed, resumably\n"
                 "(finished runs are skipped; a larger budget added later trains only what it adds, and a\n"
                 "budget removed again only what the larger sweep left untrained), then writes OUT/summary.h5\n"
                 "and prints the loss per budget.\n"
                 "Sweep file: [sweep] train_config, out, budgets, peaks, seeds, metric, jobs;\n"
                 "[schedules] NAME = [separate|branching|single:] SPEC with {peak} {budget} {budgets} {seed};\n"
                 "any `lrkit train` section ([train], [eval], ...) applies to every run.\n\n"
              << options;
    return kExitOk;
  }
  if (config_path.empty()) throw UsageError("--config SWEEP.cfg is required (see lrkit sweep --help)");
  if (jobs && *jobs < 1) throw UsageError("--jobs must be >= 1 (got " + std::to_string(*jobs) + ")");
  SweepConfig sweep;
  SweepPlan plan;
  try {
    sweep = read_sweep_config(config_path);
    if (jobs) sweep.jobs = *jobs;
    const auto base = check_runs(sweep);
    plan = plan_sweep(sweep, base.train.seed);
    for (const auto& run : plan.runs) {  // every run's arguments must parse before any starts
      train::TrainConfig c;
      std::string help;
      train::parse_train_config(run.args, c, help);
    }
    train::machine_cores();  // a malformed LRKIT_CORES, before any run starts
    const auto left = std::count_if(plan.runs.begin(), plan.runs.end(),
                                    [&](const SweepRun& run) { return !finished_earlier(run, sweep.out); });
    if (left > 0) check_memory(base, std::min<int64_t>(sweep.jobs, left));
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  if (vm.count("dry-run")) {
    for (const auto& run : plan.runs) {
      std::cout << run.name << ": steps " << run.start_step << ".." << run.steps << ", " << run.schedule_spec;
      if (run.depends_on >= 0) std::cout << ", branches from " << plan.runs[static_cast<size_t>(run.depends_on)].name;
      if (run.reads_log_of >= 0) std::cout << ", after " << plan.runs[static_cast<size_t>(run.reads_log_of)].name;
      if (!run.milestones.empty()) {
        std::cout << ", milestones";
        for (auto m : run.milestones) std::cout << " " << m;
      }
      std::cout << "\n";
    }
    for (size_t k = 0; k < sweep.schedules.size(); ++k)
      std::cout << sweep.schedules[k].name << " (" << sweep.schedules[k].mode << "): " << plan.schedule_steps[k]
                << " steps, separate runs " << plan.separate_steps[k] << "\n";
    return kExitOk;
  }
  const DirectoryLock lock(sweep.out, DirectoryOwner::kSweep);  // until the summary is written
  const auto states = run_sweep(plan, sweep.out, sweep.jobs, std::cout);
  // +inf where the run diverged before the result's step: it ranks last, and a mean over seeds with it is +inf too.
  std::vector<double> losses;
  for (const auto& r : plan.results) {
    const double loss = eval_loss_at(train::run_log_path(run_directory(sweep.out, plan.runs[r.run].name)), sweep.metric, r.step);
    losses.push_back(std::isnan(loss) && states[r.run] == RunState::kDiverged ? std::numeric_limits<double>::infinity() : loss);
  }
  const auto cost = schedule_costs(sweep, plan);
  const std::string summary = (fs::path(sweep.out) / "summary.h5").string();
  write_summary(summary, sweep, plan, losses, cost);
  print_tables(std::cout, sweep, plan, losses, cost);
  std::cout << "\nsummary: " << summary << std::endl;
  size_t failed = 0, diverged = 0;
  for (auto s : states) {
    failed += s == RunState::kFailed || s == RunState::kBlocked;
    diverged += s == RunState::kDiverged;
  }
  if (diverged > 0)
    std::cout << diverged << " run(s) diverged (non-finite loss); summary.h5 gives their results as +inf" << std::endl;
  if (failed > 0) {
    std::cerr << "lrkit sweep: " << failed << " run(s) failed or could not start; rerun to retry them" << std::endl;
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace lrkit::cli
