// Settings compared: against the run log's on a resume (run_log.hpp's
// require_the_logged_settings), and across the workers of one run.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

// config_values() as runs compare them: the NAME=PATH lists (data.sources, eval.sets) by their entries' names, since
// a moved file keeps its name.
std::vector<std::pair<std::string, std::string>> compared_values(const TrainConfig& config);

// Every worker's settings compared with rank 0's (one all-gather of a hash per key, after one of the key names).
// Workers started with other config files or options (a machine with an older copy) would train with other models,
// rates or batches under one all-reduce. Only what is each machine's own may differ: data.path (its mount point),
// train.threads, train.peak_tflops, train.profile_steps, train.profile_from and dist.timeout_s; schedule.spec
// compares by its rates at every step (a spec may name a file by a machine's own path), and the data files by their
// sampled contents (each machine may keep a copy of its own). Throws
// std::invalid_argument on every rank when any other key differs, naming the keys with this rank's values.
// `schedule` is config's learning-rate schedule, which the caller has built already (a refined spec reads and refines
// its file).
void require_one_config(const TrainConfig& config, const schedules::Schedule& schedule, distributed::Collective& collective);

}  // namespace lrkit::train
