#include "wandb_series.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string_view>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "json_number.hpp"
#include "protobuf_wire.hpp"
#include "series_columns.hpp"
#include "wandb_log_reader.hpp"

namespace lrkit::schedules {

namespace {

// Field numbers of wandb/proto/wandb_internal.proto's Record and the messages in it.
namespace field {
constexpr uint64_t kRecordHistory = 2, kRecordConfig = 5, kRecordMetric = 12, kRecordRun = 17;
constexpr uint64_t kRunConfig = 4;
constexpr uint64_t kHistoryItem = 1, kHistoryStep = 2, kHistoryStepNum = 1;
constexpr uint64_t kItemKey = 1, kItemNestedKey = 2, kItemValueJson = 16;  // HistoryItem's and ConfigItem's
constexpr uint64_t kConfigUpdate = 1;
constexpr uint64_t kMetricName = 1, kMetricGlobName = 2, kMetricStepMetric = 4;
}  // namespace field

std::string joined(const std::string& directory, const std::string& name) {
  return (std::filesystem::path(directory) / name).string();  // composes a name; the disk is asked in file_status
}

// An item of a history row or a config: its name (the key, or the nested key's parts joined by '.') and its JSON.
struct Item {
  std::string name;
  std::string_view value_json;
};

void read_item(const WireField& item_field, Item& item) {
  item.name.clear();
  item.value_json = {};
  bool keyed = false;
  WireReader fields(item_field);
  for (WireField f; fields.next(f);) {
    if (f.type != kBytes) continue;
    if (f.number == field::kItemKey && !f.text().empty()) {
      item.name.assign(f.text());
      keyed = true;
    }
    if (f.number == field::kItemNestedKey && !keyed) item.name.append(item.name.empty() ? "" : ".").append(f.text());
    if (f.number == field::kItemValueJson) item.value_json = f.text();
  }
}

// '*' any text, '?' any one character: define_metric's globs ("train/*", "*").
bool glob_matches(std::string_view glob, std::string_view name) {
  size_t g = 0, n = 0, star = std::string_view::npos, resume = 0;
  while (n < name.size()) {
    if (g < glob.size() && (glob[g] == '?' || glob[g] == name[n])) {
      ++g, ++n;
    } else if (g < glob.size() && glob[g] == '*') {
      star = g++;
      resume = n;
    } else if (star != std::string_view::npos) {
      g = star + 1;
      n = ++resume;
    } else {
      return false;
    }
  }
  while (g < glob.size() && glob[g] == '*') ++g;
  return g == glob.size();
}

// The step metrics wandb.define_metric gave, as the run defined them.
class StepMetrics {
 public:
  void define(const WireField& metric) {
    std::string name, glob, step_metric;
    WireReader fields(metric);
    for (WireField f; fields.next(f);) {
      if (f.type != kBytes) continue;
      if (f.number == field::kMetricName) name.assign(f.text());
      if (f.number == field::kMetricGlobName) glob.assign(f.text());
      if (f.number == field::kMetricStepMetric) step_metric.assign(f.text());
    }
    if (name.empty() && glob.empty()) return;
    auto& definitions = name.empty() ? globs_ : names_;
    const std::string& key = name.empty() ? glob : name;
    const auto it = std::find_if(definitions.begin(), definitions.end(), [&](const auto& d) { return d.first == key; });
    // A later definition without a step metric keeps the earlier one's (W&B merges them).
    if (it == definitions.end()) definitions.emplace_back(key, step_metric);
    else if (!step_metric.empty()) it->second = step_metric;
  }

  // The step metric of `name`: its own definition's (which shadows every glob, even without one), else the first
  // matching glob's; empty for none.
  const std::string& of(std::string_view name) const {
    for (const auto& [key, step_metric] : names_)
      if (key == name) return step_metric;
    for (const auto& [glob, step_metric] : globs_)
      if (glob_matches(glob, name)) return step_metric;
    static const std::string none;
    return none;
  }

 private:
  std::vector<std::pair<std::string, std::string>> names_, globs_;
};

class HistoryReader {
 public:
  HistoryReader(const std::string& path, const std::string& values_name, const std::string& steps_name)
      : path_(path), values_names_(column_names_for(values_name)), steps_names_(column_names_for(steps_name)) {}

  void read(const std::string& record, uint64_t offset) {
    offset_ = offset;
    WireReader fields(reinterpret_cast<const unsigned char*>(record.data()), record.size());
    for (WireField f; fields.next(f);) {
      if (f.type != kBytes) continue;
      if (f.number == field::kRecordHistory) add_row(f);
      if (f.number == field::kRecordMetric) step_metrics_.define(f);
      if (f.number == field::kRecordConfig) read_config(f);
      if (f.number == field::kRecordRun) {
        WireReader run(f);
        for (WireField r; run.next(r);)
          if (r.number == field::kRunConfig && r.type == kBytes) read_config(r);
      }
    }
  }

  bool has_rows() const { return !series_.values.empty(); }
  // What a refusal says of a log without a row of the column: the names its rows hold.
  std::string why_no_rows() const {
    return "'" + path_ + "': no history row holds " + names_for_message(values_names_) +
           (seen_names_.empty() ? " (it holds no history)" : " (they hold " + list_for_message(seen_names_, 40) + ")");
  }

  Series take() {
    if (series_.values.empty()) throw SeriesFileError(why_no_rows());
    return std::move(series_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw SeriesFileError("'" + path_ + "': the history row at byte " + std::to_string(offset_) + ": " + what);
  }

  // A value of the row and the name it was found by.
  struct Found {
    std::string name;
    JsonMember value;
  };

  const Item* item_named(std::string_view name) const {
    for (size_t i = 0; i < item_count_; ++i)
      if (items_[i].name == name) return &items_[i];
    return nullptr;
  }

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
    if (const Item* item = item_named(name)) {
      try {
        parse_json_value(item->value_json, out.value);
      } catch (const JsonError& e) {
        fail(item->name + ": '" + text_for_message(std::string(item->value_json)) + "' is not JSON (" + e.what() + ")");
      }
      out.name = name;
      return true;
    }
    for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
      const Item* outer = item_named(std::string_view(name).substr(0, dot));
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

  void add_row(const WireField& history) {
    item_count_ = 0;
    bool has_step_num = false;
    double step_num = 0.0;
    WireReader fields(history);
    for (WireField f; fields.next(f);) {
      if (f.number == field::kHistoryItem && f.type == kBytes) {
        if (item_count_ == items_.size()) items_.emplace_back();
        read_item(f, items_[item_count_++]);
      }
      if (f.number == field::kHistoryStep && f.type == kBytes) {
        has_step_num = true;  // proto3 leaves out a num of 0
        WireReader step(f);
        for (WireField s; step.next(s);)
          if (s.number == field::kHistoryStepNum && s.type == kVarint) step_num = static_cast<double>(
              static_cast<int64_t>(s.bits));
      }
    }
    // The names rows hold, for take()'s refusal: gathered until the first row of the column.
    for (size_t i = 0; series_.values.empty() && i < item_count_ && seen_names_.size() < 64; ++i)
      if (std::find(seen_names_.begin(), seen_names_.end(), items_[i].name) == seen_names_.end())
        seen_names_.push_back(items_[i].name);
    bool found = false;
    for (size_t i = 0; !found && i < values_names_.size(); ++i) found = find_value(values_names_[i], value_);
    if (!found) return;  // another metric's row
    double value = 0.0;
    if (!number_in(value_, value)) return;  // null: no value this row
    bool stepped = false;
    if (const std::string& step_metric = step_metrics_.of(value_.name); !step_metric.empty()) {
      stepped = find_value(step_metric, step_);
      if (!stepped)
        fail("it holds " + value_.name + " but not " + step_metric + ", the step metric wandb.define_metric gave it");
    }
    for (size_t i = 0; !stepped && i < steps_names_.size(); ++i) stepped = find_value(steps_names_[i], step_);
    if (!stepped) stepped = find_value("_step", step_);
    double step = step_num;
    if (stepped && !number_in(step_, step)) fail(step_.name + ": the step is null");
    if (!stepped && !has_step_num) fail("it holds " + value_.name + " but no step (_step)");
    if (!std::isfinite(step)) fail((stepped ? step_.name : "_step") + ": the step must be a finite number");
    series_.steps.push_back(step);
    series_.values.push_back(value);
  }

  void read_config(const WireField& config) {
    WireReader fields(config);
    Item item;
    for (WireField f; fields.next(f);) {
      if (f.number != field::kConfigUpdate || f.type != kBytes) continue;
      read_item(f, item);
      if (item.name != "max_steps") continue;
      double max_steps = 0.0;
      try {
        parse_json_value(item.value_json, json_);
      } catch (const JsonError&) {
        continue;  // a config's other use of the name; the rows are read all the same
      }
      const bool planned = number_of(json_, max_steps, [](const std::string&) {}) && max_steps >= 1 &&
                           max_steps < 1e15 && max_steps == std::floor(max_steps);
      series_.run_steps = planned ? static_cast<int64_t>(max_steps) : 0;  // -1: the epochs set the length
    }
  }

  std::string path_;
  std::vector<std::string> values_names_, steps_names_;
  StepMetrics step_metrics_;
  std::vector<Item> items_;  // the row's items, reused from row to row
  size_t item_count_ = 0;
  JsonMember json_;  // a config's value
  Found value_, step_;  // the row's, reused
  std::vector<std::string> seen_names_;
  uint64_t offset_ = 0;
  Series series_;
};

}  // namespace

std::string wandb_log_in(const std::string& directory) {
  std::vector<std::string> logs;
  for (const std::string& name : directory_names(directory)) {
    const std::string path = joined(directory, name);
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".wandb") == 0 && path_kind(path) == PathKind::kFile &&
        is_wandb_file(path))
      logs.push_back(path);
  }
  if (logs.size() > 1)
    throw SeriesFileError("'" + directory + "' holds " + std::to_string(logs.size()) +
                          " Weights & Biases run logs: " + list_for_message(logs, 10) + ": name one");
  return logs.empty() ? std::string() : logs.front();
}

namespace {

// The run directories below `directory` (wandb_runs_below's), each with its log: empty where it holds several.
std::vector<std::pair<std::string, std::string>> runs_and_logs(const std::string& directory) {
  std::vector<std::pair<std::string, std::string>> runs;
  for (const std::string& parent : {directory, joined(directory, "wandb")}) {
    if (!is_directory_path(parent)) continue;
    for (const std::string& name : directory_names(parent)) {
      const std::string path = joined(parent, name);
      if (!is_directory_path(path)) continue;
      try {
        if (std::string log = wandb_log_in(path); !log.empty()) runs.emplace_back(path, std::move(log));
      } catch (const SeriesFileError&) {
        runs.emplace_back(path, "");  // one with several logs is named all the same
      }
    }
  }
  return runs;
}

}  // namespace

std::vector<std::string> wandb_runs_below(const std::string& directory) {
  std::vector<std::string> runs;
  for (const auto& run : runs_and_logs(directory)) runs.push_back(run.first);
  return runs;
}

std::vector<std::string> wandb_sessions_below(const std::string& directory) {
  // A run directory's name: [offline-]run-DATE_TIME-ID. The sessions sort by their time; one ID makes them one run.
  std::vector<std::pair<std::string, std::string>> sessions;  // (DATE_TIME, the log)
  std::string id;
  for (const auto& [run, log] : runs_and_logs(directory)) {
    const std::string name = std::filesystem::path(run).filename().string();
    if (name == "latest-run") continue;
    const size_t start = name.rfind("run-", 0) == 0 ? 4 : name.rfind("offline-run-", 0) == 0 ? 12 : std::string::npos;
    const size_t dash = name.rfind('-');
    if (start == std::string::npos || dash == std::string::npos || dash < start) return {};
    if (!id.empty() && name.substr(dash + 1) != id) return {};
    id = name.substr(dash + 1);
    if (log.empty()) return {};  // several logs in one directory: named, one by one, by the caller's refusal
    sessions.emplace_back(name.substr(start, dash - start), log);
  }
  std::sort(sessions.begin(), sessions.end());
  std::vector<std::string> logs;
  for (const auto& session : sessions) logs.push_back(session.second);
  return logs;
}

Series read_wandb_series(const std::vector<std::string>& paths, const std::string& values_name,
                         const std::string& steps_name) {
  Series series;
  std::string none;  // why the first session holds no row of the column, where none does
  for (const std::string& path : paths) {
    WandbLogReader records(path);
    HistoryReader history(path, values_name, steps_name);
    std::string record;
    while (records.next(record)) {
      try {
        history.read(record, records.record_offset());
      } catch (const WireMalformed& e) {
        throw SeriesFileError("'" + path + "': the record at byte " + std::to_string(records.record_offset()) +
                              " is no W&B record (" + e.what() + ")");
      }
    }
    if (!history.has_rows()) {  // a session killed before it logged the column, say
      if (none.empty()) none = history.why_no_rows();
      continue;
    }
    Series session = history.take();
    series.steps.insert(series.steps.end(), session.steps.begin(), session.steps.end());
    series.values.insert(series.values.end(), session.values.begin(), session.values.end());
    if (session.run_steps > 0) series.run_steps = session.run_steps;  // a resumed session's, where it sets one
  }
  if (series.values.empty()) throw SeriesFileError(none);
  return series;
}

}  // namespace lrkit::schedules
