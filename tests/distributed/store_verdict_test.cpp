// The rendezvous-store exchange that settles a check before a process group
// exists: threads as ranks share a real c10d store.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "store_ranks.hpp"
#include "store_verdict.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::testing::on_store_ranks;

TEST(StoreVerdict, OneJudgeSeesEveryRanksValueInRankOrderAndEveryRankReadsItsVerdict) {
  std::atomic<int> judged{0};
  std::vector<std::string> seen;
  const auto judge = [&](const std::vector<std::string>& values) {
    ++judged;
    seen = values;
    return "ranks' values: " + values[0] + values[1] + values[2] + values[3];
  };
  const auto verdicts = on_store_ranks(4, [&](int rank, c10d::Store& store) {
    return store_verdict(store, "letters", rank, 4, std::string(1, static_cast<char>('a' + rank)), judge);
  });
  EXPECT_EQ(judged.load(), 1);
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_EQ(verdicts, std::vector<std::string>(4, "ranks' values: abcd"));
}

TEST(StoreVerdict, NothingWrongIsAnEmptyVerdictAndAnyLineOfTheJudgeComesBackAsItIs) {
  for (const std::string& line : {std::string(), std::string("-"), std::string("!"), std::string("ok"), std::string("a\nb")}) {
    const auto verdicts = on_store_ranks(3, [&](int rank, c10d::Store& store) {
      return store_verdict(store, "any", rank, 3, "", [&](const std::vector<std::string>&) { return line; });
    });
    EXPECT_EQ(verdicts, std::vector<std::string>(3, line)) << "'" << line << "'";
  }
  EXPECT_EQ(on_store_ranks(1, [](int rank, c10d::Store& store) {
              return store_verdict(store, "alone", rank, 1, "x", [](const std::vector<std::string>& values) {
                return values == std::vector<std::string>{"x"} ? "" : "the one rank's value was lost";
              });
            }),
            std::vector<std::string>{""});
}

// The checks of one rendezvous run one after another in its store: each topic keeps its own values and verdict.
TEST(StoreVerdict, ChecksUnderOtherTopicsInOneStoreDoNotMeet) {
  const auto verdicts = on_store_ranks(2, [](int rank, c10d::Store& store) {
    const std::string first = store_verdict(store, "first", rank, 2, "1" + std::to_string(rank),
                                            [](const std::vector<std::string>& v) { return v[0] + "," + v[1]; });
    const std::string second = store_verdict(store, "second", rank, 2, "2" + std::to_string(rank),
                                             [](const std::vector<std::string>& v) { return v[0] + "," + v[1]; });
    return first + " then " + second;
  });
  EXPECT_EQ(verdicts, std::vector<std::string>(2, "10,11 then 20,21"));
}

}  // namespace
}  // namespace lrkit::distributed
