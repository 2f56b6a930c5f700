// Checkpoints: model, optimizer state, step, CPU RNG state, the schedule spec
// and HDET's controller states in one LibTorch archive, written atomically
// (temporary file, fsync, rename, fsync of the directory) as
// DIR/checkpoints/step_<step>.pt; the last `keep` are kept. Data position
// needs no state: batches are a function of the step. An HDET run's replicas
// other than replica 0 go to step_<step>.replica_<g>.pt, written before the
// main file, so a main file on disk means its replicas are complete.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/controllers/hdet.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/run_files.hpp"

namespace lrkit::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointInfo {
  int64_t step = 0;
  std::string schedule_spec;
  std::vector<controllers::HdetState> hdet;  // empty: not an HDET run
};

// Saves after `step` completed updates; returns the file written. Removes the
// oldest checkpoints (and their replica files) beyond the newest `keep`,
// except those at the `pinned` steps (a sweep's fork and budget points).
std::string save_checkpoint(const std::string& run_dir, int64_t keep, const std::vector<int64_t>& pinned, int64_t step, Gpt& model,
                            torch::optim::Optimizer& optimizer, const std::string& schedule_spec,
                            const std::vector<controllers::HdetState>& hdet = {});

// Replica `replica` (>= 1) of an HDET run at `step`; returns the file written.
std::string save_replica_checkpoint(const std::string& run_dir, int64_t step, int64_t replica, Gpt& model,
                                    torch::optim::Optimizer& optimizer, const std::string& schedule_spec);

// The newest checkpoint under run_dir/checkpoints, if any.
std::optional<std::string> latest_checkpoint(const std::string& run_dir);

// The step, schedule spec and HDET states of a checkpoint, restoring nothing.
CheckpointInfo read_checkpoint_info(const std::string& path);

// Restores the model and, when given, the optimizer and the CPU RNG. Throws
// CheckpointError naming the file when it is missing, truncated or corrupt.
CheckpointInfo load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer* optimizer);

}  // namespace lrkit::train
