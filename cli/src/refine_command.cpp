// `lrkit refine RUN.h5 --out FILE`: a finished run's gradient norms turned
// into a refined schedule for the next run (Defazio et al. 2023; ALGORITHMS.md
// section 4), written as a table the next run reads with table(file=...), so
// it no longer depends on the old log.
#include <boost/program_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "command.hpp"
#include "schedule_output.hpp"
#include "lrkit/common/run_log_file.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_file.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/spec_error.hpp"
#include "lrkit/options/whole_number_option.hpp"

namespace po = boost::program_options;

namespace lrkit::cli {

int run_refine_command(const std::vector<std::string>& args) {
  std::string run, out, norm = "l1";
  double peak = 0, tau = 0.1;
  int64_t steps = 0;
  po::options_description visible("options");
  visible.add_options()("help,h", "show this help")("out,o", po::value(&out), "the refined schedule's table (.h5, .csv or .tsv)")(
      "peak", po::value(&peak), "peak learning rate of the refined schedule (required)")(
      "norm", po::value(&norm)->default_value(norm), "l1 (Adam-type optimizers, the default) or l2 (SGD)")(
      "tau", po::value(&tau)->default_value(tau, schedules::format_number(tau)), "median-filter width as a fraction of the run")(
      "steps", options::whole_number(&steps), "length of the next run (0: the source run's length)");
  const auto vm = parse_with_positional(args, visible, run, "refine");
  run = run_log_argument(run);
  if (vm.count("help")) {
    std::cout << "usage: lrkit refine RUN.h5|RUN_DIR --peak LR --out FILE.h5|FILE.csv|FILE.tsv [options]\n\n"
                 "Reads /train/grad_norm_l1 (or /train/grad_norm with --norm l2) of a finished run and\n"
                 "writes the refined schedule; train the next run with the printed schedule.spec.\n"
                 "RUN may also be a CSV, TensorBoard event files, a Hugging Face Trainer's output\n"
                 "or checkpoint directory (--norm l2 reads its grad_norm; its max_steps is the\n"
                 "length), a W&B run, an MLflow run or store (mlflow.db, mlflow.db/RUN) or JSON\n"
                 "lines; give --steps where it logged every k-th step.\n\n"
              << visible;
    return kExitOk;
  }
  if (run.empty()) throw UsageError("no run log given (usage: lrkit refine RUN.h5 --peak LR --out FILE)");
  if (out.empty()) throw UsageError("--out FILE is required (.h5, .csv or .tsv)");
  if (!vm.count("peak")) throw UsageError("--peak is required (the refined schedule's largest rate)");
  if (norm != "l1" && norm != "l2") throw UsageError("--norm must be l1 or l2 (got '" + norm + "')");
  if (steps < 0) throw UsageError("--steps must be >= 0 (got " + std::to_string(steps) + ")");
  check_table_file(out);
  std::error_code same_error;
  if (std::filesystem::equivalent(run, out, same_error))
    throw UsageError("--out '" + out + "' is the run log itself; write the refined schedule to another file");
  // The norms as the spec reads them: an lrkit run log, a CSV or TensorBoard event files.
  schedules::Series norms;
  try {
    norms = schedules::read_series_file(run, norm == "l1" ? "/train/grad_norm_l1" : "/train/grad_norm", "/train/step",
                                        schedules::RepeatedSteps::Replace);
  } catch (const schedules::SeriesFileError& e) {
    throw UsageError(e.what());
  }
  // The source run's length: the one its log records (a Trainer's max_steps), else its rows where it logged every
  // step; a log of every k-th step does not tell.
  if (steps == 0 && norms.run_steps > 0) steps = norms.run_steps;
  if (steps == 0) {
    if (norms.steps.back() - norms.steps.front() + 1 != static_cast<double>(norms.steps.size()))
      throw UsageError("'" + run + "' holds " + std::to_string(norms.steps.size()) + " gradient norms at steps " +
                       schedules::format_number(norms.steps.front()) + ".." +
                       schedules::format_number(norms.steps.back()) +
                       ", not one per step: give the next run's length with --steps");
    steps = static_cast<int64_t>(norms.steps.size());
  }
  // Paths quoted where they hold spaces, commas or brackets; numbers exact (to_string would round tau to 6 places).
  const std::string spec = "refined(norms=" + schedules::format_word(run) + ", peak=" + schedules::format_number(peak) +
                           ", norm=" + norm + ", tau=" + schedules::format_number(tau) + ")";
  const schedules::Schedule schedule = [&] {
    try {
      return schedules::parse_schedule(spec, steps);
    } catch (const schedules::SpecError& e) {
      throw UsageError(e.what());
    }
  }();
  const std::string next = write_table_file(out, schedule, steps);
  // A non-finite norm (a skipped update's) was filled by the schedule's reading.
  const auto skipped =
      std::count_if(norms.values.begin(), norms.values.end(), [](double v) { return !std::isfinite(v); });
  std::cout << "refined " << steps << " steps from " << run << " (" << norm << " norms";
  if (skipped > 0)
    std::cout << "; " << skipped << " of " << norms.values.size()
              << " not finite, skipped updates: filled in from their neighbours";
  std::cout << ")\n"
            << "schedule.spec = " << next << "\n";
  return kExitOk;
}

}  // namespace lrkit::cli
