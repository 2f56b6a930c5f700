// Checkpoints: model (and its shape: model.layers, heads, width, context,
// vocab), optimizer state, step, CPU RNG state, the schedule spec and HDET's
// controller states in one LibTorch archive, behind a header with
// its size and CRC-32 (verified on every read: a damaged file is an error
// naming it), written atomically (temporary file, fsync, rename, fsync of the
// directory) as DIR/checkpoints/step_<step>.pt; the last `keep` are kept. Data position
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
#include "lrkit/diagnostics/spike_detector.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/run_files.hpp"

namespace lrkit::train {

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Writing a checkpoint failed (a full disk, a quota): a failure at run time, where the other CheckpointErrors are a
// checkpoint given that cannot serve (`lrkit train` exits 1 on this one, 2 on those).
class CheckpointWriteError : public CheckpointError {
 public:
  using CheckpointError::CheckpointError;
};

// What the training loop carries across a resume besides the weights and the optimizer: the updates skipped on a
// non-finite loss in a row (train.skip_limit counts on) and the spike detectors' windows (train.skip_loss_z,
// train.skip_grad_z), so a resumed run skips the updates the uninterrupted one would.
struct LoopState {
  int64_t skipped_in_a_row = 0;
  diagnostics::SpikeDetector::State loss_spikes, grad_norm_spikes;
};

struct CheckpointInfo {
  int64_t step = 0;
  uint32_t crc32 = 0;  // of the payload, verified
  std::string schedule_spec;
  int64_t schedule_steps = 0;  // the run length (train.steps) the spec was built for; 0: written before it was recorded
  std::vector<controllers::HdetState> hdet;  // empty: not an HDET run
  LoopState loop;  // absent parts (checkpoints written before them) are empty: no streak, empty windows
};

struct SavedCheckpoint {
  std::string path;
  uint32_t crc32 = 0;
};

// "crc32:0123abcd", how a checkpoint's checksum is shown and logged.
std::string format_checksum(uint32_t crc32);

// Saves after `step` completed updates. Removes the oldest checkpoints (and
// their replica files) beyond the newest `keep`, except those at the `pinned`
// steps (a sweep's fork and budget points). A write failure (disk full, ...)
// throws CheckpointError naming the file and errno and leaves nothing behind.
SavedCheckpoint save_checkpoint(const std::string& run_dir, int64_t keep, const std::vector<int64_t>& pinned, int64_t step, Gpt& model,
                            torch::optim::Optimizer& optimizer, const std::string& schedule_spec, int64_t schedule_steps,
                            const std::vector<controllers::HdetState>& hdet = {}, const LoopState& loop = {});

// Replica `replica` (>= 1) of an HDET run at `step`.
SavedCheckpoint save_replica_checkpoint(const std::string& run_dir, int64_t step, int64_t replica, Gpt& model,
                                    torch::optim::Optimizer& optimizer, const std::string& schedule_spec);

// The step, schedule spec, HDET states and loop state of a checkpoint, restoring nothing.
CheckpointInfo read_checkpoint_info(const std::string& path);

// Restores the model and, when given, the optimizer and the CPU RNG. Throws
// CheckpointError naming the file when it is missing, truncated, damaged
// (checksum) or not a checkpoint, and when it holds another model shape than
// `model`'s (naming the keys that differ or, in a checkpoint that does not
// record its shape, the first tensor or module that differs or that one side lacks).
CheckpointInfo load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer* optimizer);

}  // namespace lrkit::train
