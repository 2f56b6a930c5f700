#include "mlflow_series.hpp"

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "run_length.hpp"
#include "series_columns.hpp"

namespace lrkit::schedules {

namespace {

std::string joined(const std::string& directory, const std::string& name) {
  return (std::filesystem::path(directory) / name).string();  // composes a name; the disk is asked in file_status
}

// The metrics below `directory`, as NAME or PREFIX/NAME, sorted.
void list_metrics(const std::string& directory, const std::string& prefix, std::vector<std::string>& out) {
  for (const std::string& name : directory_names(directory)) {
    const std::string path = joined(directory, name);
    const PathKind kind = path_kind(path);
    if (kind == PathKind::kFile) out.push_back(prefix + name);
    if (kind == PathKind::kDirectory && out.size() < 1000) list_metrics(path, prefix + name + "/", out);
  }
}

// A line's fields, split at single spaces as MLflow writes and reads them: the first three in `fields`, and their
// count (more than 3 where the line has more).
size_t fields_of(std::string_view line, std::array<std::string_view, 3>& fields) {
  size_t count = 0, start = 0;
  while (true) {
    const size_t space = line.find(' ', start);
    if (count < fields.size())
      fields[count] = line.substr(start, space == std::string_view::npos ? std::string_view::npos : space - start);
    ++count;
    if (space == std::string_view::npos) return count;
    start = space + 1;
  }
}

}  // namespace

bool is_mlflow_run(const std::string& directory) {
  return path_kind(joined(directory, "meta.yaml")) == PathKind::kFile &&
         is_directory_path(joined(directory, "metrics"));
}

std::vector<std::string> mlflow_runs_below(const std::string& directory) {
  std::vector<std::string> runs;
  for (const std::string& name : directory_names(directory))
    if (is_mlflow_run(joined(directory, name))) runs.push_back(joined(directory, name));
  return runs;
}

namespace {

// The run whose metrics directory holds the file `path`, or "".
std::string run_of_metric_file(const std::string& path) {
  std::filesystem::path at = std::filesystem::path(path).lexically_normal().parent_path();
  for (; !at.empty() && at != at.root_path(); at = at.parent_path())
    if (at.filename() == "metrics" && is_mlflow_run(at.parent_path().string())) return at.parent_path().string();
  return "";
}

// The run's param max_steps (a Trainer's TrainingArguments, which Hugging Face's MLflowCallback logs), a file
// RUN/params/max_steps holding the value, as Series::run_steps.
int64_t planned_steps_of(const std::string& run) {
  std::ifstream in(joined(joined(run, "params"), "max_steps"), std::ios::binary);
  std::string text;
  double max_steps = 0.0;
  return in && std::getline(in, text) && text_to_double(text, max_steps) ? planned_run_steps(max_steps) : 0;
}

}  // namespace

bool is_mlflow_metric_file(const std::string& path) { return !run_of_metric_file(path).empty(); }

std::string mlflow_metric_in(const std::string& run, const std::string& values_name) {
  const auto names = column_names_for(values_name);
  for (const std::string& name : names) {
    const std::string path = joined(joined(run, "metrics"), name);
    if (path_kind(path) == PathKind::kFile) return path;
  }
  std::vector<std::string> metrics;
  list_metrics(joined(run, "metrics"), "", metrics);
  throw SeriesFileError("'" + run + "': the MLflow run has no metric " + names_for_message(names) +
                        (metrics.empty() ? " (it has none)" : " (its metrics: " + list_for_message(metrics, 24) + ")"));
}

Series read_mlflow_metric(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SeriesFileError("cannot open '" + path + "': no such file or not readable");
  Series series;
  std::string line;
  std::array<std::string_view, 3> fields;  // reused from line to line
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (in.eof()) {  // no line end: MLflow appends whole lines, so this one was cut
      series.last_line_cut = !line.empty();
      break;
    }
    if (line.empty()) continue;
    const size_t count = fields_of(line, fields);
    double value = 0.0, step = 0.0, timestamp = 0.0;
    const auto where = [&] { return "'" + path + "' line " + std::to_string(number) + ": "; };
    if ((count != 2 && count != 3) || !text_to_double(fields[0], timestamp))
      throw SeriesFileError(where() + "'" + text_for_message(line) + "' is not an MLflow metric's line (TIMESTAMP " +
                            "VALUE STEP)");
    if (!text_to_double(fields[1], value))
      throw SeriesFileError(where() + "the value '" + text_for_message(fields[1]) + "' is not a number");
    // A line of two fields is MLflow's older form, at step 0.
    if (count == 3 && (!text_to_double(fields[2], step) || !std::isfinite(step)))
      throw SeriesFileError(where() + "the step '" + text_for_message(fields[2]) + "' is not a number");
    series.steps.push_back(step);
    series.values.push_back(value);
  }
  if (series.values.empty()) throw SeriesFileError("'" + path + "' holds no rows");
  if (const std::string run = run_of_metric_file(path); !run.empty()) series.run_steps = planned_steps_of(run);
  return series;
}

}  // namespace lrkit::schedules
