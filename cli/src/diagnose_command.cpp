// `lrkit diagnose FILE`: the silent-inconsistency report for an lrkit run log
// or a per-rank CSV / JSON-lines log from another trainer.
#include <boost/program_options.hpp>

#include <iostream>

#include "command.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "lrkit/diagnostics/report.hpp"

namespace po = boost::program_options;

namespace lrkit::cli {

int run_diagnose_command(const std::vector<std::string>& args) {
  diagnostics::ReportOptions options;
  std::string path;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("json", "print the report as one JSON object")(
      "window", po::value(&options.window)->default_value(options.window), "trailing window of the robust z-scores (steps)")(
      "jump-z", po::value(&options.jump_z)->default_value(options.jump_z), "flag a dispersion jump / consistency drop beyond this robust z")(
      "spike-z", po::value(&options.spike_z)->default_value(options.spike_z), "flag a loss / gradient-norm spike above this robust z")(
      "outlier-z", po::value(&options.outlier_z)->default_value(options.outlier_z), "flag a rank whose extreme-count binomial z exceeds this")(
      "skip", po::value(&options.skip)->default_value(options.skip), "ignore the first N steps");
  const auto vm = parse_with_positional(args, visible, path, "diagnose");
  if (vm.count("help")) {
    std::cout << "usage: lrkit diagnose RUN.h5 | RANKS.csv | RANKS.jsonl [--json] [options]\n\n"
                 "Per-rank CSV / JSON lines: one row per (step, rank) with step, rank, loss, grad_norm\n"
                 "and optionally cos_to_mean (see the README for a PyTorch DDP snippet).\n\n"
              << visible;
    return kExitOk;
  }
  if (path.empty()) throw UsageError("no log given (usage: lrkit diagnose RUN.h5 [--json])");
  try {
    const auto report = diagnostics::analyze(diagnostics::read_rank_log(path), options);
    std::cout << (vm.count("json") ? diagnostics::format_json(report) : diagnostics::format_text(report));
  } catch (const diagnostics::RankLogError& e) {
    throw UsageError(e.what());
  }
  return kExitOk;
}

}  // namespace lrkit::cli
