// refined (Defazio et al. 2023, from an earlier run's gradient norms) and
// table (any tabulated schedule): both read a series from CSV, HDF5 or TensorBoard event files.
#include <cmath>
#include <stdexcept>

#include "common.hpp"
#include "lrkit/schedules/refine.hpp"
#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules::detail {

namespace {

Series read_or_fail(const Args& args, const std::string& file_key, const std::string& values_name,
                    const std::string& steps_name, RepeatedSteps repeated) {
  try {
    return read_series_file(args.text(file_key, ""), values_name, steps_name, repeated);
  } catch (const SeriesFileError& e) {
    args.fail(args.value(file_key), e.what());
  }
}

MutableNode build_refined(const Args& args, Context& ctx) {
  if (!args.has("norms"))
    args.fail_call("refined needs norms=FILE (a run directory, its log.h5, a CSV of gradient norms or TensorBoard "
                   "event files)");
  const double peak = args.rate("peak");
  const int64_t total = args.require_total(ctx.total);
  if (total > kMostRefinedSteps)
    args.fail_call("refined schedules are tabulated; at most " + std::to_string(kMostRefinedSteps) + " steps (got " +
                   std::to_string(total) + ")");
  const bool l1 = args.word("norm", "l2", {"l2", "l1"}) == "l1";
  const double tau = args.real("tau", 0.1);
  if (!(tau >= 0 && tau <= 1)) args.fail_key("tau", "'tau' must be in [0, 1] (got " + format_number(tau) + ")");
  const std::string column = args.text("column", l1 ? "/train/grad_norm_l1" : "/train/grad_norm");
  // A log: a run resumed from an older checkpoint logged some steps again, and its later rows are the ones trained.
  const Series norms = read_or_fail(args, "norms", column, "/train/step", RepeatedSteps::Replace);
  std::vector<double> multipliers;
  try {
    multipliers = refine_from_norms(norms.values, total, l1 ? NormKind::L1 : NormKind::L2, tau);
  } catch (const std::invalid_argument& e) {
    args.fail(args.value("norms"), e.what());
  }
  std::vector<double> steps(multipliers.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    steps[i] = static_cast<double>(i);
    multipliers[i] *= peak;
  }
  return std::make_shared<TableNode>(std::move(steps), std::move(multipliers));
}

MutableNode build_table(const Args& args, Context&) {
  if (!args.has("file"))
    args.fail_call("table needs file=PATH (CSV with step,lr columns, an HDF5 file, a run directory or TensorBoard "
                   "event files)");
  const std::string column = args.text("column", "/train/lr");
  const std::string steps = args.text("steps", "/train/step");
  Series series = read_or_fail(args, "file", column, steps, RepeatedSteps::Refuse);
  for (size_t i = 0; i < series.values.size(); ++i)
    if (!std::isfinite(series.values[i]) || series.values[i] < 0)
      args.fail(args.value("file"), "row " + std::to_string(i + 1) + " holds learning rate " +
                                        format_number(series.values[i]) + "; rates must be finite and >= 0");
  if (series.steps.front() < 0) args.fail(args.value("file"), "steps must be >= 0");
  return std::make_shared<TableNode>(std::move(series.steps), std::move(series.values));
}

}  // namespace

std::vector<Family> file_families() {
  return {
      {"refined", {"norms", "peak", "norm", "tau", "column", "total"}, false, build_refined,
       "refined from an earlier run's gradient norms (Defazio et al. 2023); norm=l2 (SGD) or l1 (Adam)"},
      {"table", {"file", "column", "steps"}, false, build_table,
       "values read from a CSV (step,lr), an HDF5 dataset or a TensorBoard tag, linearly interpolated"},
  };
}

}  // namespace lrkit::schedules::detail
