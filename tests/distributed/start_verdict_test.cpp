// Whether every worker starts: the refusal over published reasons, and the exchange through a real c10d store by
// threads as ranks, where the store's host waits until every rank has read a refusal.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "start_verdict.hpp"
#include "store_ranks.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::testing::on_store_ranks;

TEST(StartVerdict, NoRefusalStartsEveryRank) {
  EXPECT_EQ(refused_start({}), "");
  EXPECT_EQ(refused_start({"", "", ""}), "");
}

TEST(StartVerdict, TheRefusingRanksAreNamedWithTheFirstOnesReason) {
  EXPECT_EQ(refused_start({"run directory 'out' holds an earlier run", ""}),
            "rank 0 refused to start: run directory 'out' holds an earlier run");
  EXPECT_EQ(refused_start({"", "", "data file 'a' does not exist", "", "data file 'b' does not exist"}),
            "ranks 2, 4 refused to start (rank 2: data file 'a' does not exist)");
}

TEST(StartVerdict, EveryRankReadsTheVerdictBeforeTheStoresHostGoesOn) {
  const std::vector<std::string> refusals = {"", "", "no data here"};
  std::vector<long long> read_by_host(3, -1);
  const auto verdicts = on_store_ranks(3, [&](int rank, c10d::Store& store) {
    const bool host = rank == 0;
    std::string verdict = start_verdict(store, rank, 3, refusals[static_cast<std::size_t>(rank)], host, std::chrono::seconds(30));
    if (host) read_by_host[0] = store.add("lrkit/start/read", 0);  // every rank had read it when the host went on
    return verdict;
  });
  EXPECT_EQ(verdicts, std::vector<std::string>(3, "rank 2 refused to start: no data here"));
  EXPECT_EQ(read_by_host[0], 3);
  // Nothing refused: no rank waits for the others' reading.
  EXPECT_EQ(on_store_ranks(2, [](int rank, c10d::Store& store) {
              return start_verdict(store, rank, 2, "", rank == 0, std::chrono::seconds(30));
            }),
            std::vector<std::string>(2, ""));
}

}  // namespace
}  // namespace lrkit::distributed
