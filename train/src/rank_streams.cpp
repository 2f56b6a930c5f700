#include "lrkit/train/rank_streams.hpp"

namespace lrkit::train {

RankStreams rank_streams(const TrainConfig& c, int rank, int world_size) {
  // Stream numbers; the rank is mixed in after.
  constexpr uint64_t kDropout = 1, kDesyncData = 2, kDesyncDropout = 3;
  const auto r = static_cast<uint64_t>(rank);
  const bool desynced = c.desynced_ranks(world_size)[static_cast<size_t>(rank)];
  const int64_t rank_rows = c.train.batch / world_size;
  RankStreams s;
  s.first_row = c.dist.data_split == DataSplit::identical ? 0 : rank * rank_rows;
  s.data_seed = desynced ? derive_seed(derive_seed(c.train.seed, kDesyncData), r) : c.train.seed;
  if (desynced)
    s.dropout_seed = derive_seed(derive_seed(c.train.seed, kDesyncDropout), r);
  else
    s.dropout_seed = derive_seed(derive_seed(c.train.seed, kDropout), c.dist.dropout_seed == DropoutSeed::per_rank ? r : 0);
  return s;
}

}  // namespace lrkit::train
