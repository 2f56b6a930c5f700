// `lrkit diagnose FILE...`: the silent-inconsistency report for an lrkit run
// log, a per-rank CSV / JSON-lines log from another trainer (a row per step and
// rank, or a row per step with a column per rank), or one such file per rank
// (several paths or a quoted glob).
#include <boost/program_options.hpp>

#include <iostream>

#include "command.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "lrkit/diagnostics/report.hpp"
#include "lrkit/options/whole_number_option.hpp"

namespace po = boost::program_options;

namespace lrkit::cli {

int run_diagnose_command(const std::vector<std::string>& args) {
  diagnostics::ReportOptions options;
  std::vector<std::string> inputs;
  std::string columns;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("json", "print the report as one JSON object")(
      "columns", po::value(&columns),
      "the log's names of the fields (CSV / JSON-lines columns, W&B keys, TensorBoard tags), e.g. "
      "loss=train/loss,step=global_step (an entry in double quotes may hold a comma)")(
      "window", options::whole_number(&options.window),
      "trailing window of the robust z-scores (steps; default: 50, for a long log 2 % of its steps, at most 500)")(
      "jump-z", po::value(&options.jump_z)->default_value(options.jump_z), "flag a dispersion jump / consistency drop beyond this robust z")(
      "shift-z", po::value(&options.shift_z)->default_value(options.shift_z),
      "flag a loss-spread jump that lasts half a window beyond this shift z (the median after against the "
      "window before)")(
      "spike-z", po::value(&options.spike_z)->default_value(options.spike_z), "flag a loss spike above this robust z")(
      "grad-spike-z", po::value(&options.grad_spike_z)->default_value(options.grad_spike_z),
      "flag a gradient-norm spike above this robust z (gradient norms are heavy-tailed)")(
      "outlier-z", po::value(&options.outlier_z)->default_value(options.outlier_z), "flag a rank whose extreme-count binomial z exceeds this")(
      "skip", options::whole_number(&options.skip), "ignore the first N steps (default: the first 10 %, warmup transients)");
  po::options_description all;
  all.add(visible).add_options()("input", po::value(&inputs));
  po::positional_options_description positional;
  positional.add("input", -1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw option_error(e, visible, "diagnose");
  }
  if (vm.count("help")) {
    std::cout << "usage: lrkit diagnose RUN.h5 | RUN_DIR | RANKS.csv | RANKS.jsonl | 'rank*.csv' | WANDB_DIR\n"
                 "                      | TENSORBOARD_DIR [--json] [options]\n\n"
                 "RUN_DIR: a run directory of lrkit train (its log.h5).\n"
                 "WANDB_DIR: Weights & Biases runs, one per rank (every rank called wandb.init), below\n"
                 "it (wandb/ or the directory holding it), or their run directories / .wandb files;\n"
                 "each run's rank from its config's rank (--columns rank=KEY), else the number the\n"
                 "names differ in (rank-0, ...), else the order the runs started in (a warning says so).\n"
                 "Or one run whose rows hold every rank's values (loss_0, ... or rank{rank}.loss).\n"
                 "Its rows at the step W&B plots the loss against; resumed sessions are joined.\n"
                 "TENSORBOARD_DIR: TensorBoard runs (a directory's event files), one per rank below it\n"
                 "at any depth (rank_0, rank_1, ...: ranked by the number their paths differ in), or their\n"
                 "directories; or one run with a tag per rank (loss_0, ...), add_scalars' runs below it\n"
                 "(loss_0/, ... of add_scalars(\"loss\", {\"0\": ...})) read as its tags. Files that\n"
                 "several writers wrote at once in one directory are a rank each, in name order. A\n"
                 "later session's file replaces the steps it logs again; --columns maps tags.\n"
                 "Per-rank CSV / JSON lines: one row per (step, rank) with step, rank, loss and\n"
                 "optionally grad_norm and cos_to_mean (see the README for a PyTorch DDP snippet);\n"
                 "or one row per step with a column per rank and field and no rank field (step, loss_0,\n"
                 "loss_1, ..., grad_norm_0, ...; with --columns 'loss=rank{rank}/loss,...' other names\n"
                 "of that kind); or one file per rank (several paths or a quoted glob, ranks in natural\n"
                 "order) without the rank field.\n"
                 "In JSON lines, \"session\": \"resume\" on the rows of a resume's first step marks it\n"
                 "(a DispersionHook writes it). A step missing some rank's row is skipped with a warning.\n"
                 "An empty CSV value is NaN, as pandas writes and reads one (JSON lines: NaN or null).\n"
                 "Without gradient norms the loss alone is diagnosed (a warning and a note say so).\n"
                 "Gradient norms and cosines logged at some steps only (every k steps) are tested over\n"
                 "those steps; a step gives them for every rank or none (a CSV: every rank's cell empty).\n\n"
              << visible;
    return kExitOk;
  }
  if (inputs.empty()) throw UsageError("no log given (usage: lrkit diagnose RUN.h5 [--json])");
  try {
    diagnostics::ReadOptions read;
    if (vm.count("columns")) read.columns = diagnostics::parse_column_mapping(columns);
    const auto log = diagnostics::read_rank_logs(diagnostics::rank_log_paths(inputs), read);
    for (const auto& warning : log.warnings) std::cerr << "lrkit diagnose: warning: " << warning << "\n";
    const auto report = diagnostics::analyze(log, options);
    std::cout << (vm.count("json") ? diagnostics::format_json(report) : diagnostics::format_text(report));
  } catch (const diagnostics::RankLogError& e) {
    throw UsageError(e.what());
  }
  return kExitOk;
}

}  // namespace lrkit::cli
