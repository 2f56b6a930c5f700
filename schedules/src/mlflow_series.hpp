// A series from MLflow's file store (mlruns/EXPERIMENT/RUN/): each metric is a file RUN/metrics/NAME (a NAME with
// '/' in subdirectories) of lines "TIMESTAMP VALUE STEP", appended as the run logs it (mlflow.log_metric, Hugging
// Face's MLflowCallback, Lightning's MLFlowLogger).
#pragma once

#include <string>
#include <vector>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

// A run's directory: it holds meta.yaml and a metrics directory.
bool is_mlflow_run(const std::string& directory);
// The runs directly in `directory` (an experiment's), sorted.
std::vector<std::string> mlflow_runs_below(const std::string& directory);
// A metric's file: a file below a run's metrics directory.
bool is_mlflow_metric_file(const std::string& path);

// The file of the run's metric named by `values_name` (series_columns.hpp: the path whole, else its last component).
// Throws SeriesFileError listing the run's metrics where it has none of those names.
std::string mlflow_metric_in(const std::string& run, const std::string& values_name);
// One metric's file. A line that is not "TIMESTAMP VALUE [STEP]" is refused with its line; the last line, without
// its line end, is one a writer was still appending (or was killed in): left out (last_line_cut). Its run's param
// max_steps (a Trainer's) is Series::run_steps.
Series read_mlflow_metric(const std::string& path);

}  // namespace lrkit::schedules
