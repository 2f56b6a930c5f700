#include "lrkit/common/wandb_history.hpp"

#include <algorithm>

#include "lrkit/common/protobuf_wire.hpp"

namespace lrkit {

namespace {

// Field numbers of wandb/proto/wandb_internal.proto's Record and the messages in it.
namespace field {
constexpr uint64_t kRecordHistory = 2, kRecordConfig = 5, kRecordMetric = 12, kRecordRun = 17;
constexpr uint64_t kRunId = 1, kRunConfig = 4, kRunGroup = 6, kRunDisplayName = 8;
constexpr uint64_t kHistoryItem = 1, kHistoryStep = 2, kHistoryStepNum = 1;
constexpr uint64_t kItemKey = 1, kItemNestedKey = 2, kItemValueJson = 16;  // HistoryItem's and ConfigItem's
constexpr uint64_t kConfigUpdate = 1;
constexpr uint64_t kMetricName = 1, kMetricGlobName = 2, kMetricStepMetric = 4;
}  // namespace field

void read_item(const WireField& item_field, WandbItem& item) {
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

}  // namespace

void WandbStepMetrics::define(const std::string& name, const std::string& glob, const std::string& step_metric) {
  if (name.empty() && glob.empty()) return;
  auto& definitions = name.empty() ? globs_ : names_;
  const std::string& key = name.empty() ? glob : name;
  const auto it = std::find_if(definitions.begin(), definitions.end(), [&](const auto& d) { return d.first == key; });
  if (it == definitions.end()) definitions.emplace_back(key, step_metric);
  else if (!step_metric.empty()) it->second = step_metric;
}

const std::string& WandbStepMetrics::of(std::string_view name) const {
  for (const auto& [key, step_metric] : names_)
    if (key == name) return step_metric;
  for (const auto& [glob, step_metric] : globs_)
    if (glob_matches(glob, name)) return step_metric;
  static const std::string none;
  return none;
}

WandbHistory::WandbHistory(const std::string& path) : path_(path), records_(path) {}

bool WandbHistory::next_row() {
  while (records_.next(record_)) {
    try {
      read_record();
    } catch (const WireMalformed& e) {
      throw WandbLogError("'" + path_ + "': the record at byte " + std::to_string(records_.record_offset()) +
                          " is no W&B record (" + e.what() + ")");
    }
    if (row_) return true;
  }
  return false;
}

const WandbItem* WandbHistory::item_named(std::string_view name) const {
  for (size_t i = 0; i < item_count_; ++i)
    if (items_[i].name == name) return &items_[i];
  return nullptr;
}

const std::string* WandbHistory::config(const std::string& key) const {
  const auto it = config_.find(key);
  return it == config_.end() ? nullptr : &it->second;
}

void WandbHistory::read_record() {
  row_ = false;
  WireReader fields(reinterpret_cast<const unsigned char*>(record_.data()), record_.size());
  for (WireField f; fields.next(f);) {
    if (f.type != kBytes) continue;
    if (f.number == field::kRecordHistory) {
      row_ = true;
      item_count_ = 0;
      step_num_.reset();
      WireReader row(f);
      for (WireField r; row.next(r);) {
        if (r.number == field::kHistoryItem && r.type == kBytes) {
          if (item_count_ == items_.size()) items_.emplace_back();
          read_item(r, items_[item_count_++]);
        }
        if (r.number == field::kHistoryStep && r.type == kBytes) {
          step_num_ = 0.0;  // proto3 leaves out a num of 0
          WireReader step(r);
          for (WireField s; step.next(s);)
            if (s.number == field::kHistoryStepNum && s.type == kVarint)
              step_num_ = static_cast<double>(static_cast<int64_t>(s.bits));
        }
      }
    }
    if (f.number == field::kRecordMetric) {
      std::string name, glob, step_metric;
      WireReader metric(f);
      for (WireField m; metric.next(m);) {
        if (m.type != kBytes) continue;
        if (m.number == field::kMetricName) name.assign(m.text());
        if (m.number == field::kMetricGlobName) glob.assign(m.text());
        if (m.number == field::kMetricStepMetric) step_metric.assign(m.text());
      }
      step_metrics_.define(name, glob, step_metric);
    }
    if (f.number == field::kRecordConfig) read_config(f.text());
    if (f.number == field::kRecordRun) {
      WireReader run(f);
      for (WireField r; run.next(r);) {
        if (r.type != kBytes) continue;
        if (r.number == field::kRunConfig) read_config(r.text());
        if (r.number == field::kRunDisplayName) display_name_.assign(r.text());
        if (r.number == field::kRunGroup) group_.assign(r.text());
        if (r.number == field::kRunId) run_id_.assign(r.text());
      }
    }
  }
}

void WandbHistory::read_config(std::string_view config) {
  WireReader fields(reinterpret_cast<const unsigned char*>(config.data()), config.size());
  WandbItem item;
  for (WireField f; fields.next(f);) {
    if (f.number != field::kConfigUpdate || f.type != kBytes) continue;
    read_item(f, item);
    config_[item.name].assign(item.value_json);
  }
}

}  // namespace lrkit
