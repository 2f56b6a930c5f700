#include "wandb_series.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/wandb_history.hpp"
#include "json_number.hpp"
#include "run_length.hpp"
#include "series_columns.hpp"

namespace lrkit::schedules {

namespace {

// The column's rows of one run log.
class HistoryReader {
 public:
  HistoryReader(const std::string& path, const std::string& values_name, const std::string& steps_name)
      : history_(path), values_names_(column_names_for(values_name)), steps_names_(column_names_for(steps_name)) {}

  // Reads every row; the series is the column's rows, with the run's length where its config gives one.
  void read() {
    while (history_.next_row()) add_row();
    series_.run_steps = planned_steps();
  }

  bool has_rows() const { return !series_.values.empty(); }
  // What a refusal says of a log without a row of the column: the names its rows hold.
  std::string why_no_rows() const {
    return "'" + history_.path() + "': no history row holds " + names_for_message(values_names_) +
           (seen_names_.empty() ? " (it holds no history)" : " (they hold " + list_for_message(seen_names_, 40) + ")");
  }
  Series take() { return std::move(series_); }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SeriesFileError("'" + history_.path() + "': the history row at byte " +
                          std::to_string(history_.row_offset()) + ": " + what);
  }

  // A value of the row and the name it was found by.
  struct Found {
    std::string name;
    JsonMember value;
  };

  // `path`'s member of the object `outer` (an object's text), its parts joined by '.' in the name W&B gives it.
  static bool member_at(const std::string& outer, std::string_view path, JsonMember& out, int depth = 0) {
    JsonObject object;
    try {
      object.parse(outer);
    } catch (const JsonError&) {
      return false;
    }
    if (const JsonMember* whole = object.find(path)) return out = *whole, true;
    for (size_t dot = path.find('.'); dot != std::string_view::npos && depth < 16; dot = path.find('.', dot + 1))
      if (const JsonMember* part = object.find(path.substr(0, dot));
          part && part->kind == JsonMember::Kind::nested && member_at(part->text, path.substr(dot + 1), out, depth + 1))
        return true;
    return false;
  }

  // The value named `name` in the row: an item's, or a member of an item's object (wandb.log({"train": {"lr": x}})
  // logs one item, train, whose member lr W&B names train.lr). False where the row holds none.
  bool find_value(const std::string& name, Found& out) {
    if (const WandbItem* item = history_.item_named(name)) {
      try {
        parse_json_value(item->value_json, out.value);
      } catch (const JsonError& e) {
        fail(item->name + ": '" + text_for_message(std::string(item->value_json)) + "' is not JSON (" + e.what() + ")");
      }
      out.name = name;
      return true;
    }
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      const WandbItem* outer = history_.item_named(std::string_view(name).substr(0, dot));
      if (outer && member_at(std::string(outer->value_json), std::string_view(name).substr(dot + 1), out.value)) {
        out.name = name;
        return true;
      }
    }
    return false;
  }

  // The found value as a number, false for null.
  bool number_in(const Found& found, double& number) {
    return number_of(found.value, number, [&](const std::string& problem) { fail(found.name + ": " + problem); });
  }

  void add_row() {
    // The names rows hold, for why_no_rows(): gathered until the first row of the column.
    for (size_t i = 0; series_.values.empty() && i < history_.size() && seen_names_.size() < 64; ++i)
      if (std::find(seen_names_.begin(), seen_names_.end(), history_[i].name) == seen_names_.end())
        seen_names_.push_back(history_[i].name);
    bool found = false;
    for (size_t i = 0; !found && i < values_names_.size(); ++i) found = find_value(values_names_[i], value_);
    if (!found) return;  // another metric's row
    double value = 0.0;
    if (!number_in(value_, value)) return;  // null: no value this row
    bool stepped = false;
    if (const std::string& step_metric = history_.step_metrics().of(value_.name); !step_metric.empty()) {
      stepped = find_value(step_metric, step_);
      if (!stepped)
        fail("it holds " + value_.name + " but not " + step_metric + ", the step metric wandb.define_metric gave it");
    }
    for (size_t i = 0; !stepped && i < steps_names_.size(); ++i) stepped = find_value(steps_names_[i], step_);
    if (!stepped) stepped = find_value("_step", step_);
    double step = history_.step_num().value_or(0.0);
    if (stepped && !number_in(step_, step)) fail(step_.name + ": the step is null");
    if (!stepped && !history_.step_num()) fail("it holds " + value_.name + " but no step (_step)");
    if (!std::isfinite(step)) fail((stepped ? step_.name : "_step") + ": the step must be a finite number");
    series_.steps.push_back(step);
    series_.values.push_back(value);
  }

  // The config's max_steps (a Trainer's TrainingArguments) where it is a whole number of steps; 0 otherwise (-1:
  // the epochs set the length).
  int64_t planned_steps() const {
    const std::string* text = history_.config("max_steps");
    JsonMember json;
    double max_steps = 0.0;
    try {
      if (!text) return 0;
      parse_json_value(*text, json);
    } catch (const JsonError&) {
      return 0;  // a config's other use of the name; the rows are read all the same
    }
    return number_of(json, max_steps, [](const std::string&) {}) ? planned_run_steps(max_steps) : 0;
  }

  WandbHistory history_;
  std::vector<std::string> values_names_, steps_names_;
  Found value_, step_;  // the row's, reused
  std::vector<std::string> seen_names_;
  Series series_;
};

}  // namespace

Series read_wandb_series(const std::vector<std::string>& paths, const std::string& values_name,
                         const std::string& steps_name) {
  Series series;
  std::string none;  // why the first session holds no row of the column, where none does
  for (const std::string& path : paths) {
    Series session;
    try {
      HistoryReader history(path, values_name, steps_name);
      history.read();
      if (!history.has_rows()) {  // a session killed before it logged the column, say
        if (none.empty()) none = history.why_no_rows();
        continue;
      }
      session = history.take();
    } catch (const WandbLogError& e) {
      throw SeriesFileError(e.what());
    }
    series.steps.insert(series.steps.end(), session.steps.begin(), session.steps.end());
    series.values.insert(series.values.end(), session.values.begin(), session.values.end());
    if (session.run_steps > 0) series.run_steps = session.run_steps;  // a resumed session's, where it sets one
  }
  if (series.values.empty()) throw SeriesFileError(none);
  return series;
}

}  // namespace lrkit::schedules
