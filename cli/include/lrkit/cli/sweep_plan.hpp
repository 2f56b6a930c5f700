// A budgeted-iteration sweep (`lrkit sweep`): schedules x budgets x peak
// learning rates x seeds, planned into `lrkit train` runs. Each schedule is run
// in one of three modes (ALGORITHMS.md section 2):
//   separate   one run per budget, the schedule stretched to it;
//   branching  one main run whose schedule never decays, checkpointed where
//              each budget's schedule departs from it, and one decay branch
//              per budget continuing that checkpoint (WSD with branches);
//   single     one run for all budgets, evaluated at its milestones: the
//              schedule's own checkpoints (WSD-S) or the budgets (cyclic cosine).
// Planning is pure (no files, no processes), so it is tested directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lrkit::cli {

struct SweepSchedule {
  std::string name;
  std::string mode = "separate";  // separate | branching | single
  // template: {peak}, {budget}, {budgets}, {seed}; peak= added when absent. {run:NAME} is the run log of schedule
  // NAME (separate, defined above) at the same budget, peak and seed: `refined(norms={run:linear})` refines each
  // budget's linear run, and waits for it.
  std::string spec;
  std::optional<size_t> line = std::nullopt;  // where the sweep file defines it (none: not read from a file)
};

struct SweepConfig {
  std::string train_config;  // the base `lrkit train --config` file ("" : defaults)
  std::string out = "out/sweep";
  std::vector<int64_t> budgets;
  std::vector<double> peaks;      // empty: every spec carries its own peak
  std::vector<uint64_t> seeds;    // empty: the base config's seed
  std::vector<SweepSchedule> schedules;
  std::vector<std::string> overrides;  // "--section.key=value" for every run, from the sweep file's other sections
  std::string metric = "heldout";      // eval set whose loss ranks the runs
  int64_t jobs = 1;
  std::string text;  // the sweep file, kept in the summary
  std::string path;  // the sweep file's path, which planning errors name with the schedule's line ("": none)
};

// Reads a sweep file: [sweep] (train_config, out, budgets, peaks, seeds,
// metric, jobs), [schedules] (NAME = [MODE:] SPEC, in file order) and any
// `lrkit train` section ([train], [eval], ...) applied to every run.
// Throws std::invalid_argument naming the file, key and value.
SweepConfig read_sweep_config(const std::string& path);

struct SweepRun {
  std::string name;               // directory under OUT/runs
  std::string schedule_spec;      // concrete
  int64_t steps = 0;              // train.steps
  int64_t start_step = 0;         // where it starts (a branch: its fork)
  uint64_t seed = 0;
  std::vector<int64_t> milestones;  // checkpoint.at
  int depends_on = -1;            // index of the run it branches from
  std::vector<std::string> args;  // the `lrkit train` arguments
  int reads_log_of = -1;          // index of the run whose log its spec reads ({run:NAME}): it starts once that one finished
};

// Where one (schedule, budget, peak, seed) result is read.
struct SweepResult {
  size_t schedule = 0;
  int64_t budget = 0;
  double peak = 0;  // NaN when the spec carries its own
  uint64_t seed = 0;
  size_t run = 0;
  int64_t step = 0;     // the eval step holding the loss
  int64_t compute = 0;  // updates trained to reach it since step 0 (a branch: main run to the fork + the branch)
};

struct SweepPlan {
  std::vector<SweepRun> runs;
  std::vector<SweepResult> results;
  std::vector<int64_t> schedule_steps;   // updates each schedule's runs are planned to train in all
  std::vector<int64_t> separate_steps;   // what separate runs of the same results would train
};

// Every run and result of the sweep; throws std::invalid_argument naming the
// schedule (and its file and line, where read from one) when a spec does not
// parse or a mode cannot apply to it.
SweepPlan plan_sweep(const SweepConfig& config, uint64_t default_seed);

// `spec` with its placeholders filled and `peak=` added to the outer call when
// a peak is given and the spec has no {peak}.
std::string instantiate_spec(const std::string& spec, int64_t budget, const std::vector<int64_t>& budgets, double peak,
                             uint64_t seed);

}  // namespace lrkit::cli
