// A series from a Weights & Biases run log (wandb/run-DATE-ID/run-ID.wandb, written by every W&B run, online or
// offline: wandb.log, Hugging Face's WandbCallback, Lightning's WandbLogger): the history rows that hold the column,
// at the step W&B plots them against.
#pragma once

#include <string>
#include <vector>

#include "lrkit/schedules/series_file.hpp"

namespace lrkit::schedules {

// The history rows of the run log at `path` that hold the column: its value item, found by its key (a nested key's
// parts joined by '.', as W&B names it; or a member of an item's object, by its path joined by '.': a dict logged
// as one item, wandb.log({"train": {"lr": x}}), is train.lr) under column_names_for(values_name); the value is JSON
// text, a number or NaN/Infinity, null for none. Its step: the value of its step metric where wandb.define_metric
// gave it one (by name, else by the first glob that matches, as W&B's handler looks it up; Hugging Face's and
// Lightning's loggers define train/global_step and trainer/global_step), else an item under
// column_names_for(steps_name), else the row's _step. A config's max_steps (a Trainer's TrainingArguments), where
// positive, is the run's length (run_steps). Throws SeriesFileError naming the file and the record's byte offset.
// Several paths are one run's sessions, oldest first: their rows in turn (a resumed session's rows from a step it
// logs again replace the earlier ones where read_series_file reads a log, as for event files).
Series read_wandb_series(const std::vector<std::string>& paths, const std::string& values_name,
                         const std::string& steps_name);

}  // namespace lrkit::schedules
