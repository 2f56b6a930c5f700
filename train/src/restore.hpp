// Where a run starts: --resume (auto or a file), --branch-from or --init-from,
// applied to every replica and to HDET's controllers.
#pragma once

#include <cstdint>
#include <ostream>
#include <vector>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/hdet_ensemble.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/train_config.hpp"
#include "replicas.hpp"

namespace lrkit::train {

struct Restored {
  RunStart start;              // what was read (kind, file, checksum) and the first step to train
  bool continues_log = false;  // resumed in place: the run log keeps its rows before start.step
  LoopState loop;              // the checkpoint's skip streak and spike windows, which a resume or branch continues
};

// Throws std::invalid_argument when the checkpoint does not fit the config
// (another schedule, past the end, HDET state missing or unexpected) and
// CheckpointError naming a missing, damaged (checksum) or corrupt file.
Restored restore(const TrainConfig& config, std::vector<Replica>& replicas, distributed::HdetEnsemble* hdet,
                 std::ostream& progress);

// Every worker's start compared (kind, step, the checkpoint's checksum; one all-gather of a hash and the step).
// Workers that each read a run directory of their own machine may find different checkpoints, or one none, under
// --resume auto: they would average the gradients of different weights into one model until the step counts part.
// Throws std::invalid_argument on every rank when any start differs from rank 0's, naming the steps and this rank's.
void require_one_start(const RunStart& start, distributed::Collective& collective);

}  // namespace lrkit::train
