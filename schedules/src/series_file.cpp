#include "lrkit/schedules/series_file.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/file_status.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/run_log_file.hpp"
#include "lrkit/common/tfevents.hpp"
#include "lrkit/common/wandb_log_reader.hpp"
#include "lrkit/common/wandb_runs.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/schedules/tfevents_file.hpp"
#include "json_series.hpp"
#include "mlflow_database.hpp"
#include "mlflow_series.hpp"
#include "series_columns.hpp"
#include "wandb_series.hpp"

namespace lrkit::schedules {

namespace {

// A line with a tab is TSV, any other CSV.
std::vector<std::string> split_fields(const std::string& path, size_t line_no, const std::string& line) {
  try {
    return split_csv_line(line, line.find('\t') != std::string::npos ? '\t' : ',');
  } catch (const std::invalid_argument& e) {
    throw SeriesFileError("'" + path + "' line " + std::to_string(line_no) + ": " + e.what());
  }
}

Series read_hdf5(const std::string& path, const std::string& values_name, const std::string& steps_name) {
  Series series;
  bool marked = false;
  try {
    series.values = h5::read_series(path, values_name);
    if (!steps_name.empty() && h5::has_dataset(path, steps_name)) series.steps = h5::read_series(path, steps_name);
    marked = !series.steps.empty() && series.steps.size() != series.values.size() && h5::has_writer_mark(path);
  } catch (const h5::Error& e) {
    throw SeriesFileError(e.what());
  }
  // A run log its writer still holds, or left marked when killed, may end inside a flush, one
  // series a few rows ahead of the other: the rows both have are whole.
  if (marked) {
    const size_t whole = std::min(series.steps.size(), series.values.size());
    series.steps.resize(whole);
    series.values.resize(whole);
  }
  if (!series.steps.empty() && series.steps.size() != series.values.size())
    throw SeriesFileError("'" + path + "': " + steps_name + " has " + std::to_string(series.steps.size()) +
                          " rows but " + values_name + " has " + std::to_string(series.values.size()));
  return series;
}

bool has_hdf5_name(const std::string& path) {
  std::string extension = std::filesystem::path(path).extension().string();
  std::transform(extension.begin(), extension.end(), extension.begin(), [](unsigned char c) { return std::tolower(c); });
  return extension == ".h5" || extension == ".hdf5";
}

// One data row's value (and step) into `series`: a row without this column's value (an empty cell beside a step) adds
// nothing. Throws SeriesFileError naming the line where the row is short or a cell is no number.
void add_table_row(const std::string& path, size_t line_no, const std::vector<std::string>& fields, long value_col,
                   long step_col, Series& series) {
  const size_t needed = static_cast<size_t>(std::max(value_col, step_col)) + 1;
  if (fields.size() < needed)
    throw SeriesFileError("'" + path + "' line " + std::to_string(line_no) + ": expected at least " +
                          std::to_string(needed) + " fields, found " + std::to_string(fields.size()));
  // A table of several metrics (Lightning's CSVLogger, a Weights & Biases export) leaves a metric's cell empty in
  // the rows that log others: with a step column, such a row holds no value of this one. Without one, a row's place
  // is its step, and an empty cell is refused below.
  if (step_col >= 0 && fields[static_cast<size_t>(value_col)].find_first_not_of(" \t\r") == std::string::npos)
    return;
  double value = 0.0;
  // nan and inf are numbers, as in an HDF5 series: a refined schedule fills a skipped update's norm, a table
  // refuses such a rate, each naming the row.
  if (!text_to_double(fields[static_cast<size_t>(value_col)], value))
    throw SeriesFileError("'" + path + "' line " + std::to_string(line_no) + ": '" +
                          text_for_message(fields[static_cast<size_t>(value_col)]) + "' is not a number");
  series.values.push_back(value);
  if (step_col >= 0) {
    double step = 0.0;
    if (!text_to_double(fields[static_cast<size_t>(step_col)], step) || !std::isfinite(step))
      throw SeriesFileError("'" + path + "' line " + std::to_string(line_no) + ": step '" +
                            text_for_message(fields[static_cast<size_t>(step_col)]) + "' is not a number");
    series.steps.push_back(step);
  }
}

Series read_table(const std::string& path, const std::string& values_dataset, const std::string& steps_dataset) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SeriesFileError("cannot open '" + path + "': no such file or not readable");
  // Text has no NUL bytes: a binary file would otherwise fail on whichever of its bytes came first.
  std::string head(64 * 1024, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (const auto nul = head.find('\0'); nul != std::string::npos)
    throw SeriesFileError("'" + path + "' holds a NUL byte (byte " + std::to_string(nul) +
                          "): a binary file, not a CSV or TSV table");
  in.clear();
  in.seekg(0);
  skip_byte_order_mark(in);
  Series series;
  std::string line;
  size_t line_no = 0;
  bool first_row = true;
  long value_col = -1, step_col = -1;
  size_t header_fields = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    // A last line without its line end is one a writer was killed in (a buffered writer flushes at any byte) where
    // it does not parse or holds fewer fields than the header: left out, and said, as the JSON-lines reader does.
    if (in.eof() && !first_row) {
      Series last;
      try {
        const auto fields = split_fields(path, line_no, line);
        if (fields.size() >= std::max(header_fields, static_cast<size_t>(std::max(value_col, step_col)) + 1))
          add_table_row(path, line_no, fields, value_col, step_col, last);
        else
          series.last_line_cut = true;
      } catch (const SeriesFileError&) {
        series.last_line_cut = true;
      }
      series.values.insert(series.values.end(), last.values.begin(), last.values.end());
      series.steps.insert(series.steps.end(), last.steps.begin(), last.steps.end());
      break;
    }
    const auto fields = split_fields(path, line_no, line);
    double probe = 0.0;
    if (first_row) {
      first_row = false;
      if (!text_to_double(fields[0], probe)) {  // a header row
        const auto first_column = [&](const std::vector<std::string>& names) -> long {
          for (const std::string& name : names)
            if (const auto it = std::find(fields.begin(), fields.end(), name); it != fields.end())
              return static_cast<long>(it - fields.begin());
          return -1;
        };
        const auto values_names = column_names_for(values_dataset);
        value_col = fields.size() == 1 ? 0 : first_column(values_names);
        if (value_col < 0) {
          std::vector<std::string> quoted;
          for (const std::string& field : fields) quoted.push_back("'" + text_for_message(field, 40) + "'");
          throw SeriesFileError("'" + path + "' line " + std::to_string(line_no) + ": no column named " +
                                names_for_message(values_names) + " in the header (its columns: " +
                                list_for_message(quoted, 24) + ")");
        }
        step_col = first_column(step_column_names_for(steps_dataset));
        header_fields = fields.size();
        continue;
      }
      value_col = fields.size() >= 2 ? 1 : 0;
      step_col = fields.size() >= 2 ? 0 : -1;
    }
    add_table_row(path, line_no, fields, value_col, step_col, series);
  }
  if (series.values.empty()) throw SeriesFileError("'" + path + "' holds no data rows");
  return series;
}

// The first character of a file that is not blank (a byte-order mark passed over): '{' or '[' starts JSON, which
// no table does. 0 for a file of blanks.
char first_character(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  skip_byte_order_mark(in);
  char c = 0;
  while (in.get(c))
    if (c != ' ' && c != '\t' && c != '\r' && c != '\n') return c;
  return 0;
}

// A Hugging Face Trainer's state in a directory: DIR/trainer_state.json (trainer.save_state() at the end of a run), or
// the newest checkpoint's (DIR/checkpoint-N/trainer_state.json, the largest N), whose log_history holds every row
// logged up to it. Empty where there is none. (file_status.hpp asks the disk: not std::filesystem, whose copy in the
// LibTorch 2.x wheels a process that loads them beside lrkit may call.)
std::string trainer_state_in(const std::string& directory) {
  const auto state_in = [](const std::string& dir) {
    return (std::filesystem::path(dir) / "trainer_state.json").string();
  };
  if (path_kind(state_in(directory)) == PathKind::kFile) return state_in(directory);
  std::string newest;
  long long newest_step = -1;
  for (const std::string& name : directory_names(directory)) {
    const std::string checkpoint = (std::filesystem::path(directory) / name).string();
    if (name.rfind("checkpoint-", 0) != 0 || name.size() == 11 || name.size() > 29 ||
        name.find_first_not_of("0123456789", 11) != std::string::npos ||
        path_kind(state_in(checkpoint)) != PathKind::kFile)
      continue;
    const long long step = std::stoll(name.substr(11));
    if (step > newest_step) {
      newest_step = step;
      newest = state_in(checkpoint);
    }
  }
  return newest;
}

}  // namespace

Series read_series_file(const std::string& name, const std::string& values_name, const std::string& steps_name,
                        RepeatedSteps repeated) {
  std::string path = run_log_argument(name);
  std::string source;  // the file a directory stands for, where it is one chosen among others
  std::vector<std::string> wandb_sessions;  // a W&B run's logs below the directory, oldest first
  const std::string tag = !values_name.empty() && values_name.front() == '/' ? values_name.substr(1) : values_name;
  std::optional<MlflowDatabaseRun> database = mlflow_database_path(path);  // mlflow.db, or mlflow.db/RUN
  if (!database && is_directory_path(path)) {
    if (const auto events = tfevents_files_in(path); !events.empty()) return read_tfevents_series(events, tag);
    std::string file;
    try {
      file = is_mlflow_run(path) ? mlflow_metric_in(path, values_name) : wandb_log_in(path);
    } catch (const WandbLogError& e) {
      throw SeriesFileError(e.what());
    }
    if (file.empty()) file = trainer_state_in(path);
    if (file.empty() && !(wandb_sessions = wandb_sessions_below(path)).empty()) file = wandb_sessions.front();
    if (file.empty()) database = mlflow_database_in(path);
    if (file.empty() && !database) {
      std::vector<std::string> tensorboard;
      for (const TfEventsRun& run : tfevents_runs_below(path)) tensorboard.push_back(run.path);
      const auto mlflow = mlflow_runs_below(path);
      const auto wandb = wandb_runs_below(path);
      const bool none = tensorboard.empty() && mlflow.empty() && wandb.empty();
      throw SeriesFileError(
          "'" + path + "' is a directory without a run log (log.h5), event files, a trainer_state.json, an MLflow " +
          "run's metrics or store (mlflow.db) or a W&B run log (.wandb)" +
          (none ? ": name a run directory, a log, a table or a TensorBoard run" : "") +
          (tensorboard.empty() ? "" : "; the TensorBoard runs below it: " + list_for_message(tensorboard, 10)) +
          (mlflow.empty() ? "" : "; the MLflow runs below it: " + list_for_message(mlflow, 10)) +
          (wandb.empty() ? "" : "; the W&B runs below it: " + list_for_message(wandb, 10)) +
          (none ? "" : ": name one"));
    }
    if (!file.empty()) path = source = file;
  }
  Series series;
  if (database) {
    series = read_mlflow_database(*database, values_name);
    path = database->database;
  } else {
    if (const auto problem = input_file_problem(path)) throw SeriesFileError(*problem);
    const bool hdf5 = h5::is_hdf5_file(path);
    if (!hdf5 && is_tfevents_file(path)) return read_tfevents_series({path}, tag);
    if (!hdf5 && has_hdf5_name(path))  // read as text, a damaged log gave "line 2: '<binary>' is not a number"
      throw SeriesFileError("'" + path +
                            "' is not an HDF5 file (or is truncated); a CSV or TSV table needs another name");
    const auto text_form = [&] {
      const char first = first_character(path);
      return first == '{' || first == '[' ? read_json_series(path, values_name, steps_name)
                                          : read_table(path, values_name, steps_name);
    };
    series = hdf5                          ? read_hdf5(path, values_name, steps_name)
             : is_wandb_file(path)
                 ? read_wandb_series(wandb_sessions.empty() ? std::vector<std::string>{path} : wandb_sessions,
                                     values_name, steps_name)
             : is_mlflow_metric_file(path) ? read_mlflow_metric(path)
                                           : text_form();
    series.source = wandb_sessions.size() > 1 ? list_for_message(wandb_sessions, wandb_sessions.size()) : source;
  }
  if (series.values.empty()) throw SeriesFileError("'" + path + "': " + values_name + " holds no rows");
  if (series.steps.empty()) {
    series.steps.resize(series.values.size());
    for (size_t i = 0; i < series.steps.size(); ++i) series.steps[i] = static_cast<double>(i);
  }
  if (repeated == RepeatedSteps::Replace) {
    bool increasing = true;
    for (size_t i = 0; i < series.steps.size(); ++i) {
      if (std::isnan(series.steps[i]))
        throw SeriesFileError("'" + path + "': row " + std::to_string(i + 1) + " has no step (nan)");
      increasing = increasing && (i == 0 || series.steps[i] > series.steps[i - 1]);
    }
    if (increasing) return series;  // the usual log, kept without a copy
    Series logged;
    logged.run_steps = series.run_steps;
    logged.last_line_cut = series.last_line_cut;
    logged.source = series.source;
    for (size_t i = 0; i < series.steps.size(); ++i) append_logged_row(logged, series.steps[i], series.values[i]);
    return logged;
  }
  for (size_t i = 1; i < series.steps.size(); ++i)
    if (!(series.steps[i] > series.steps[i - 1]))
      throw SeriesFileError("'" + path + "': steps must increase strictly (row " + std::to_string(i + 1) + ": " +
                            format_number(series.steps[i]) + " after " + format_number(series.steps[i - 1]) + ")");
  return series;
}

void drop_rows_from(Series& series, double step) {
  const auto first = std::lower_bound(series.steps.begin(), series.steps.end(), step);
  series.replaced += static_cast<size_t>(series.steps.end() - first);
  series.steps.erase(first, series.steps.end());
  series.values.resize(series.steps.size());
}

void append_logged_row(Series& series, double step, double value) {
  if (!series.steps.empty() && step <= series.steps.back()) drop_rows_from(series, step);
  series.steps.push_back(step);
  series.values.push_back(value);
}

}  // namespace lrkit::schedules
