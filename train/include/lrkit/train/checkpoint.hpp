// Checkpoints: model, optimizer state, step, CPU RNG state and the schedule
// spec in one LibTorch archive, written atomically (temporary file, fsync,
// rename, fsync of the directory) as DIR/checkpoints/step_<step>.pt; the last
// `keep` are kept. Data position needs no state: batches are a function of the step.
#pragma once

#include <torch/torch.h>

#include <optional>
#include <stdexcept>
#include <string>

#include "lrkit/train/gpt.hpp"

namespace lrkit::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointInfo {
  int64_t step = 0;
  std::string schedule_spec;
};

// Saves after `step` completed updates; returns the file written.
std::string save_checkpoint(const std::string& run_dir, int64_t keep, int64_t step, Gpt& model,
                            torch::optim::Optimizer& optimizer, const std::string& schedule_spec);

// The newest checkpoint under run_dir/checkpoints, if any.
std::optional<std::string> latest_checkpoint(const std::string& run_dir);

// Restores the model and, when given, the optimizer and the CPU RNG. Throws
// CheckpointError naming the file when it is missing, truncated or corrupt.
CheckpointInfo load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer* optimizer);

}  // namespace lrkit::train
