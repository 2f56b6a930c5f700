// The history rows of a Weights & Biases run log (wandb_log_reader.hpp), each with what the records before it
// defined: the step metrics wandb.define_metric gave, the config and the run's name. What a reader of its series (a
// schedule's rates, a rank's losses) needs of the records; the field numbers are wandb/proto/wandb_internal.proto's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lrkit/common/wandb_log_reader.hpp"

namespace lrkit {

// An item of a history row or of a config: its name (the key, or the nested key's parts joined by '.', as W&B names
// it) and its value as JSON text.
struct WandbItem {
  std::string name;
  std::string_view value_json;  // into the record read last
};

// The step metrics wandb.define_metric gave, as the run defined them.
class WandbStepMetrics {
 public:
  // `name` or `glob` is set; an empty `step_metric` keeps an earlier definition's (W&B merges them).
  void define(const std::string& name, const std::string& glob, const std::string& step_metric);
  // The step metric of `name`: its own definition's (which shadows every glob, even without one), else the first
  // matching glob's ('*' any text, '?' one character), in the order defined; empty for none.
  const std::string& of(std::string_view name) const;

 private:
  std::vector<std::pair<std::string, std::string>> names_, globs_;
};

class WandbHistory {
 public:
  explicit WandbHistory(const std::string& path);
  // Reads records up to the next history row; false after the last whole record. Throws WandbLogError: the
  // framing's, and a record that is no W&B record, by its byte.
  bool next_row();

  // The row's items, in its order (valid until the next call).
  size_t size() const { return item_count_; }
  const WandbItem& operator[](size_t i) const { return items_[i]; }
  const WandbItem* item_named(std::string_view name) const;
  // The row's HistoryStep.num, where it holds one.
  std::optional<double> step_num() const { return step_num_; }
  // Where the row's record begins.
  uint64_t row_offset() const { return records_.record_offset(); }

  const WandbStepMetrics& step_metrics() const { return step_metrics_; }
  // The config's value of a top-level key as the records so far set it (JSON text); null where none did.
  const std::string* config(const std::string& key) const;
  // The run's name (wandb.init(name=...), or the one W&B made up), ID and group (wandb.init(group=...)), as its run
  // record gave them; empty before it or without one.
  const std::string& display_name() const { return display_name_; }
  const std::string& run_id() const { return run_id_; }
  const std::string& group() const { return group_; }
  const std::string& path() const { return path_; }

 private:
  void read_record();
  void read_config(std::string_view config);

  std::string path_;
  WandbLogReader records_;
  std::string record_;  // the record read last, which the items view
  std::vector<WandbItem> items_;  // reused from row to row
  size_t item_count_ = 0;
  std::optional<double> step_num_;
  bool row_ = false;  // the record read last is a history row
  WandbStepMetrics step_metrics_;
  std::map<std::string, std::string, std::less<>> config_;
  std::string display_name_, run_id_, group_;
};

}  // namespace lrkit
