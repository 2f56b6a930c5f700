// A series from MLflow's database store: the SQLite file of the tracking URI sqlite:///mlflow.db, MLflow's default
// store since 3.7 (its file store, mlflow_series.hpp, before; Hugging Face's MLflowCallback logs to whichever the
// default is). Its tables as MLflow's SQLAlchemy models make them: runs (run_uuid, name, experiment_id, start_time,
// lifecycle_stage), experiments (experiment_id, name), params (run_uuid, key, value) and metrics (run_uuid, key, value,
// is_nan, step, timestamp: a row per logged value; a NaN is stored as 0 with is_nan set, an infinity as the largest
// double of its sign).
#pragma once

#include <optional>
#include <string>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

struct MlflowDatabaseRun {
  std::string database;  // the SQLite file
  std::string run;       // the run named after it (DATABASE/RUN: its ID or its name), or empty
};

// Whether `path` is a file that starts with SQLite's header.
bool is_sqlite_file(const std::string& path);

// `path` as an MLflow database and a run: an SQLite file itself, or a path through one (mlflow.db/RUN, which no file
// can have); nothing otherwise.
std::optional<MlflowDatabaseRun> mlflow_database_path(const std::string& path);

// The database a directory holds where MLflow's default tracking URI puts it (DIR/mlflow.db), if it does.
std::optional<MlflowDatabaseRun> mlflow_database_in(const std::string& directory);

// The metric of the run named, else of the one run that logs it: the first of column_names_for(values_name) that the
// run has, its rows in the order they were logged (by timestamp; a resumed run's later rows replace the earlier ones
// where the caller asks); its params' max_steps (a Trainer's) as Series::run_steps. Deleted runs are not read.
// Throws SeriesFileError naming the database and the run: a file that is no MLflow store, a run that is not there or
// a name several runs have, a metric the run lacks (listing its metrics), several runs that log the metric (listing
// them, to name one as DATABASE/RUN), and a build without SQLite.
Series read_mlflow_database(const MlflowDatabaseRun& at, const std::string& values_name);

}  // namespace lrkit::schedules
