// Which data rows and which random stream each rank uses, derived once the
// process group exists (each rank knows its rank then; the reference scripts
// of Li et al. derived seeds before and gave every rank rank 0's seed).
// Defaults are proper data parallelism: disjoint rows of one global stream and
// a dropout seed per rank. The dist.* knobs desynchronize ranks on purpose.
#pragma once

#include <cstdint>

#include "lrkit/common/numbers.hpp"  // derive_seed
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct RankStreams {
  uint64_t data_seed = 0;     // BatchKey seed of this rank's rows
  int64_t first_row = 0;      // this rank's first row in the step's global batch
  uint64_t dropout_seed = 0;  // reseeds the generator at every step: derive_seed(dropout_seed, step)
};

RankStreams rank_streams(const TrainConfig& config, int rank, int world_size);

}  // namespace lrkit::train
