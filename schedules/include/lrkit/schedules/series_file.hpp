// Reads a numeric series (values, with optional steps) from an HDF5 dataset, a
// CSV/TSV text file, a JSON log (a Hugging Face trainer_state.json, JSON lines),
// a Weights & Biases run log, an MLflow run or store or TensorBoard event files: the
// input of table(...) and refined(...) schedules and of `lrkit schedule
// --compare` and `--fit`. A run directory stands for its log (DIR/log.h5), a
// directory of event files for those, a W&B run's for its .wandb file, a
// Trainer's output or checkpoint directory for its trainer_state.json.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::schedules {

struct Series {
  std::vector<double> steps;  // 0, 1, 2, ... when the file has none
  std::vector<double> values;
  size_t replaced = 0;  // rows a resumed session wrote again, which replaced these (TensorBoard event files)
  int64_t run_steps = 0;  // the run's length where the file records it (a Trainer's max_steps), else 0
  // The last line, without its line end, was cut off by a killed writer and left out: a table's that does not parse
  // or holds fewer fields than the header, JSON lines' that is no object, an MLflow metric's.
  bool last_line_cut = false;
  // The file read where a directory stood for one chosen among others (a Trainer's newest checkpoint's
  // trainer_state.json, an MLflow run's metric; a W&B run's sessions, joined by ", "), else empty.
  std::string source;
};

class SeriesFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a step that does not exceed the row before it means. In a table it is a mistake (Refuse). In a log it is a
// run resumed from an older checkpoint that logged those steps again (Replace): its rows replace the earlier ones
// from that step on, as TensorBoard shows a resumed run. TensorBoard event files are logs whatever the caller asks.
enum class RepeatedSteps { Refuse, Replace };

// Appends a logged row: where `step` does not exceed the last row's, the rows from `step` on go first.
void append_logged_row(Series& series, double step, double value);
// Drops the rows at `step` and later, counting them in Series::replaced.
void drop_rows_from(Series& series, double step);

// HDF5 files: `values_name` and `steps_name` are dataset paths (steps are optional). Text files: comma- or
// tab-separated, '#' starts a comment; with a header row the columns are picked by name (series_columns.hpp: the path
// whole without its leading '/', else its last component, /train/lr -> lr; a step column also by the names other
// loggers give it; a lone column is taken whatever its name), and with a step column a row whose value cell is empty
// logs other metrics and is passed over; without a header a single column is the values and two columns are
// step,value; a last line without its line end that does not parse, or holds fewer fields than the header, is a line
// a killed writer cut off: left out (last_line_cut). JSON (a file whose first character is '{' or '['): a Hugging
// Face Trainer's trainer_state.json, the rows of its log_history that hold the column (its max_steps gives
// run_steps), JSON lines (an object per row) or an array of records (json_series.hpp). A W&B run log, known by its
// header (wandb_series.hpp). An MLflow run's metric (mlflow_series.hpp). An MLflow store, mlflow.db, or a run in it,
// mlflow.db/RUN (mlflow_database.hpp). A directory: its event files, else an MLflow run's metric, else its W&B run
// log, else its trainer_state.json, else its newest checkpoint-N's, else the one W&B run below it (its sessions,
// where it was resumed), else its mlflow.db. Event files (known
// by their content; a directory by the names of the files directly in it): the scalar tag `values_name` without its
// leading '/' (/train/grad_norm -> train/grad_norm, Hugging Face's tag), at the events' steps, as TensorBoard shows it
// (tfevents_file.hpp). Throws SeriesFileError naming the file, and the line for bad text.
Series read_series_file(const std::string& name, const std::string& values_name, const std::string& steps_name,
                        RepeatedSteps repeated = RepeatedSteps::Refuse);

}  // namespace lrkit::schedules
