#include "json_series.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string_view>

#include "lrkit/common/input_file.hpp"
#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "json_number.hpp"
#include "run_length.hpp"
#include "series_columns.hpp"

namespace lrkit::schedules {

namespace {

// Line and column (from 1, a column in characters) of a byte offset in `text`.
std::string line_and_column(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  const size_t line_start = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  const size_t first = offset == 0 || line_start == std::string_view::npos ? 0 : line_start + 1;
  const size_t line = static_cast<size_t>(std::count(text.begin(), text.begin() + static_cast<long>(first), '\n')) + 1;
  return "line " + std::to_string(line) + ", column " +
         std::to_string(characters_before(text.substr(first), offset - first) + 1);
}

// The rows of JSON objects (log_history's entries or the lines of JSON lines) that hold the column.
class RowReader {
 public:
  RowReader(const std::string& path, const std::string& values_name, const std::string& steps_name,
            std::string rows_name)
      : path_(path),
        values_names_(column_names_for(values_name)),
        steps_names_(step_column_names_for(steps_name)),
        rows_name_(std::move(rows_name)) {}

  // One object's row; `where()` names it in errors ("line 12", "log_history entry 3 (line 40)").
  template <class Where>
  void add(const JsonObject& object, const Where& where) {
    // The names the rows hold, for take()'s refusal, which only a file without one row of the column meets: gathered
    // until that first row, not on every row after it.
    for (size_t i = 0; series_.values.empty() && i < object.size() && seen_names_.size() < 64; ++i)
      if (std::find(seen_names_.begin(), seen_names_.end(), object[i].name) == seen_names_.end())
        seen_names_.push_back(object[i].name);
    const JsonMember* value_member = nullptr;
    for (const std::string& name : values_names_)
      if ((value_member = object.find(name))) break;
    if (!value_member) return;  // another metric's row
    const auto fail = [&](const std::string& name) {  // `name` is a member's, which outlives the call
      return [&](const std::string& problem) -> void {
        throw SeriesFileError("'" + path_ + "' " + where() + ": " + name + ": " + problem);
      };
    };
    double value = 0.0;
    if (!number_of(*value_member, value, fail(value_member->name))) return;  // null: no value this row
    if (!steps_names_.empty()) {
      const JsonMember* step_member = nullptr;
      for (const std::string& name : steps_names_)
        if ((step_member = object.find(name))) break;
      if (!step_member)
        throw SeriesFileError("'" + path_ + "' " + where() + ": it holds " + value_member->name +
                              " but no step (" + names_for_message(steps_names_) + ")");
      double step = 0.0;
      if (!number_of(*step_member, step, fail(step_member->name)) || !std::isfinite(step))
        fail(step_member->name)("the step must be a finite number (it is " + text_for_message(step_member->text) + ")");
      series_.steps.push_back(step);
    }
    series_.values.push_back(value);
  }

  Series take() {
    if (series_.values.empty())
      throw SeriesFileError("'" + path_ + "': no " + rows_name_ + " holds " + names_for_message(values_names_) +
                            (seen_names_.empty() ? "" : " (they hold " + list_for_message(seen_names_, 24) + ")"));
    return std::move(series_);
  }

 private:
  std::string path_;
  std::vector<std::string> values_names_, steps_names_;
  std::string rows_name_;
  std::vector<std::string> seen_names_;
  Series series_;
};

// The rows of an array of objects, `array` a view into the file's `text`: log_history's entries, or a file that is
// one array of records. `element` names one in errors ("log_history entry", "element").
Series read_object_array(const std::string& path, std::string_view text, std::string_view array,
                         const std::string& element, RowReader& rows) {
  const auto elements = json_array_elements(array);
  JsonObject object;
  // Each element's line, counted on from the element before: an array of 100,000 is not scanned from the file's start
  // for each.
  size_t line = 1, counted_to = 0;
  for (size_t i = 0; i < elements.size(); ++i) {
    const size_t offset = static_cast<size_t>(elements[i].data() - text.data());
    line += static_cast<size_t>(std::count(text.begin() + static_cast<long>(counted_to),
                                           text.begin() + static_cast<long>(offset), '\n'));
    counted_to = offset;
    const auto where = [&] { return element + " " + std::to_string(i + 1) + " (line " + std::to_string(line) + ")"; };
    try {
      object.parse(elements[i]);
    } catch (const JsonError&) {
      throw SeriesFileError("'" + path + "' " + where() + ": not a JSON object but '" +
                            text_for_message(elements[i], 40) + "'");
    }
    rows.add(object, where);
  }
  return rows.take();
}

// `text` is the whole file, `state` its object read with Nested::located.
Series read_trainer_state(const std::string& path, std::string_view text, const JsonObject& state,
                          const std::string& values_name, const std::string& steps_name) {
  const JsonMember* history = state.find("log_history");
  if (history->kind != JsonMember::Kind::nested || text[history->at] != '[')
    throw SeriesFileError("'" + path + "' " + line_and_column(text, history->at) +
                          ": log_history is not an array (a Hugging Face trainer_state.json's is a list of logs)");
  RowReader rows(path, values_name, steps_name, "entry of log_history");
  Series series = read_object_array(path, text, text.substr(history->at, history->end - history->at),
                                    "log_history entry", rows);
  double max_steps = 0.0;
  if (const JsonMember* planned = state.find("max_steps");
      planned && number_of(*planned, max_steps, [](const std::string&) {}))
    series.run_steps = planned_run_steps(max_steps);
  return series;
}

// The lines of JSON lines after the first (line `number`, already added to `rows`), read one at a time: a log of
// millions of rows is never held whole.
Series read_json_lines(const std::string& path, std::istream& in, size_t number, RowReader& rows) {
  bool last_line_cut = false;
  JsonObject object;
  std::string line;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    try {
      object.parse(line);
    } catch (const JsonError& e) {
      if (in.eof()) {  // the last line, without its line end: a writer killed mid-line; the rows before it are whole
        last_line_cut = true;
        break;
      }
      throw SeriesFileError("'" + path + "' line " + std::to_string(number) + ", column " +
                            std::to_string(characters_before(line, e.offset()) + 1) + ": " + e.reason() +
                            " (JSON lines: an object per line)");
    }
    rows.add(object, [&] { return "line " + std::to_string(number); });
  }
  Series series = rows.take();
  series.last_line_cut = last_line_cut;
  return series;
}

// The whole file from where `in` stands, in one allocation.
std::string rest_of(const std::string& path, std::ifstream& in) {
  const std::streamoff start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::streamoff end = in.tellg();
  in.seekg(start);
  std::string text(static_cast<size_t>(std::max<std::streamoff>(end - start, 0)), '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (start < 0 || end < 0 || !in) throw SeriesFileError("cannot read '" + path + "'");
  return text;
}

}  // namespace

Series read_json_series(const std::string& path, const std::string& values_name, const std::string& steps_name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SeriesFileError("cannot open '" + path + "': no such file or not readable");
  skip_byte_order_mark(in);
  const std::streamoff text_start = in.tellg();
  // The first line that is not blank tells the form: a whole object starts JSON lines (unless it is a
  // trainer_state.json written on one line); the first line of one object over many lines is no whole object.
  std::string line;
  size_t number = 0;
  while (std::getline(in, line) && line.find_first_not_of(" \t\r") == std::string::npos) ++number;
  ++number;
  JsonObject first;
  bool whole_line = true;
  try {
    first.parse(line);
  } catch (const JsonError&) {
    whole_line = false;
  }
  if (whole_line && !first.find("log_history")) {
    RowReader rows(path, values_name, steps_name, "line");
    rows.add(first, [&] { return "line " + std::to_string(number); });
    return read_json_lines(path, in, number, rows);
  }
  in.clear();
  in.seekg(text_start);
  const std::string text = rest_of(path, in);
  const auto not_json = [&](const JsonError& e, const std::string& hint) {
    return SeriesFileError("'" + path + "' " + line_and_column(text, e.offset()) + ": not JSON: " + e.reason() +
                           (e.reason().rfind("the text ends", 0) == 0 ? " (a truncated file?)" : hint));
  };
  if (line.find_first_not_of(" \t\r") != std::string::npos && line[line.find_first_not_of(" \t\r")] == '[') {
    // An array of records: pandas' to_json(orient="records") of a run's metrics.
    RowReader rows(path, values_name, steps_name, "element of the array");
    try {
      return read_object_array(path, text, text, "element", rows);
    } catch (const JsonError& e) {
      throw not_json(e, "");
    }
  }
  JsonObject state;
  try {
    state.parse(text, JsonObject::Nested::located);
  } catch (const JsonError& e) {
    throw not_json(e, e.reason() == "text after the object"
                          ? " (a trainer_state.json is one object; JSON lines are one object a line)"
                          : "");
  }
  if (!state.find("log_history"))
    throw SeriesFileError("'" + path + "' is one JSON object without a log_history: not a Hugging Face " +
                          "trainer_state.json, nor JSON lines (an object per line)");
  return read_trainer_state(path, text, state, values_name, steps_name);
}

}  // namespace lrkit::schedules
