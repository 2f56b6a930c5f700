// Where a run directory keeps its files: DIR/log.h5,
// DIR/checkpoints/step_<step, 10 digits>.pt (an HDET run's other replicas in
// step_<step>.replica_<g>.pt beside it) and, with train.profile_steps, each
// worker's trace in DIR/profile/rank<r>.trace.json. Torch-free: sweeps, tools and
// notebooks find a run's files without LibTorch.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/common/run_log_file.hpp"

namespace lrkit::train {

using lrkit::run_log_path;  // DIR/log.h5
std::string checkpoint_dir(const std::string& run_dir);
// The main checkpoint file's name (no directory) after `step` updates.
std::string checkpoint_file_name(int64_t step);
// The step a main checkpoint's file name (no directory) gives, or nothing for any other name.
std::optional<int64_t> checkpoint_step_of(const std::string& file_name);
// The main checkpoints (not replica files) under run_dir/checkpoints, oldest first.
std::vector<std::filesystem::path> checkpoints_oldest_first(const std::string& run_dir);
// The newest checkpoint under run_dir/checkpoints, if any.
std::optional<std::string> latest_checkpoint(const std::string& run_dir);
// The checkpoint after `step` updates of the run in run_dir.
std::string checkpoint_path(const std::string& run_dir, int64_t step);
// Replica `replica` of the checkpoint at `main_path`.
std::string replica_checkpoint_path(const std::string& main_path, int64_t replica);
// A checkpoint file that a killed save left half written: write_checkpoint_file's ".NAME.tmp" of a main or a
// replica file, never read and as large as a checkpoint.
struct PartialCheckpoint {
  std::string path;
  uint64_t bytes = 0;
};
// Removes the partial checkpoints under run_dir/checkpoints and says which they were. Only while no worker of the
// run saves one (a session's start: its lock keeps other jobs out, and its workers save after steps together).
std::vector<PartialCheckpoint> remove_partial_checkpoints(const std::string& run_dir);
// Worker `rank`'s profiler trace (Chrome trace JSON) of the run in run_dir.
std::string profile_trace_path(const std::string& run_dir, int rank);

}  // namespace lrkit::train
