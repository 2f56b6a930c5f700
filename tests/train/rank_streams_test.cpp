// The data rows and dropout seed of each rank under the desynchronization knobs.
#include "lrkit/train/rank_streams.hpp"

#include <gtest/gtest.h>

#include <set>

namespace lrkit::train {
namespace {

TrainConfig with(const std::string& split, const std::string& dropout, const std::string& desync) {
  TrainConfig c;
  c.train.batch = 16;
  c.dist.data_split = split;
  c.dist.dropout_seed = dropout;
  c.dist.desync_ranks = desync;
  c.validate();
  return c;
}

TEST(RankStreams, DefaultIsDisjointRowsOfOneStreamAndADropoutSeedPerRank) {
  const auto c = with("sharded", "per_rank", "none");
  std::set<uint64_t> dropout;
  for (int r = 0; r < 4; ++r) {
    const auto s = rank_streams(c, r, 4);
    EXPECT_EQ(s.first_row, 4 * r);
    EXPECT_EQ(s.data_seed, c.train.seed);
    dropout.insert(s.dropout_seed);
  }
  EXPECT_EQ(dropout.size(), 4u);
}

TEST(RankStreams, KnobsDesynchronizeExactlyTheNamedRanks) {
  const auto shared = with("sharded", "shared", "none");
  EXPECT_EQ(rank_streams(shared, 0, 4).dropout_seed, rank_streams(shared, 3, 4).dropout_seed);

  const auto identical = with("identical", "shared", "none");
  for (int r = 0; r < 4; ++r) EXPECT_EQ(rank_streams(identical, r, 4).first_row, 0);

  const auto one = with("sharded", "shared", "0");  // rank 0 too must leave the shared streams
  const auto r0 = rank_streams(one, 0, 4), r1 = rank_streams(one, 1, 4), r2 = rank_streams(one, 2, 4);
  EXPECT_NE(r0.data_seed, r1.data_seed);
  EXPECT_NE(r0.dropout_seed, r1.dropout_seed);
  EXPECT_EQ(r1.data_seed, r2.data_seed);
  EXPECT_EQ(r1.dropout_seed, r2.dropout_seed);

  const auto all = with("sharded", "shared", "all");
  std::set<uint64_t> seeds;
  for (int r = 0; r < 4; ++r) seeds.insert(rank_streams(all, r, 4).data_seed);
  EXPECT_EQ(seeds.size(), 4u);
}

TEST(RankStreams, BadKnobsNameTheKeyAndValue) {
  TrainConfig c;
  c.dist.desync_ranks = "1,x";
  try {
    c.validate();
    FAIL() << "accepted a bad rank list";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dist.desync_ranks"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'x'"), std::string::npos) << e.what();
  }
  c.dist.desync_ranks = "5";
  c.validate();
  EXPECT_THROW(c.desynced_ranks(4), std::invalid_argument);
  c.dist.desync_ranks = "none";
  c.dist.data_split = "shuffled";
  EXPECT_THROW(c.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace lrkit::train
