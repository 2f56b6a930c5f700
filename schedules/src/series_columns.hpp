// Which column of a table or field of a JSON row holds a series: the names a dataset path may go by in the files
// other trainers write. The text and JSON readers of series_file.cpp share them.
#pragma once

#include <string>
#include <vector>

namespace lrkit::schedules {

// The path whole without its leading '/' (train/learning_rate, lr-AdamW/pg1: a Trainer's TensorBoard tag in a
// CSV download, a Lightning LearningRateMonitor's name), then its last component (/train/lr -> lr, a run log's
// dataset as a table's column). The first that a file has is the one read.
std::vector<std::string> column_names_for(const std::string& dataset);

// The step column's names beside `steps_dataset`'s own (column_names_for): those other loggers give it. `step` (a
// Hugging Face Trainer's log_history, Lightning's CSVLogger), `Step` (TensorBoard's and Weights & Biases' CSV
// downloads), `_step` (W&B's run history), `global_step`, `trainer/global_step` (W&B's Lightning logger). None where
// `steps_dataset` is empty: the caller reads no steps.
std::vector<std::string> step_column_names_for(const std::string& steps_dataset);

// "'a' or 'b'": the names looked for, in an error.
std::string names_for_message(const std::vector<std::string>& names);

}  // namespace lrkit::schedules
