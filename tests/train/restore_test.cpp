// The check that every worker starts from the same point (restore.hpp), over a
// real group of threads as ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "restore.hpp"
#include "thread_ranks.hpp"

namespace lrkit::train {
namespace {

// What require_one_start threw on each rank ("" where it returned), rank r starting from starts[r].
std::vector<std::string> refusals(const std::vector<RunStart>& starts) {
  return lrkit::testing::refusals_on_thread_ranks(static_cast<int>(starts.size()), [&](size_t r, distributed::Collective& group) {
    require_one_start(starts[r], group);
  });
}

RunStart resumed(int64_t step, const std::string& checksum) { return {"resume", "run/checkpoints/c.pt", checksum, step}; }

TEST(OneStart, WorkersAtOnePointPass) {
  EXPECT_EQ(refusals({RunStart{}, RunStart{}, RunStart{}}), std::vector<std::string>(3, ""));
  EXPECT_EQ(refusals(std::vector<RunStart>(3, resumed(6, "crc32:0000abcd"))), std::vector<std::string>(3, ""));
}

TEST(OneStart, EveryWorkerRefusesWhenOneFoundAnotherCheckpointOrNone) {
  const auto out = refusals({resumed(6, "crc32:0000abcd"), resumed(6, "crc32:0000abcd"), RunStart{}});
  const std::string head = "the workers start from different points: rank 2 differs from rank 0 (steps by rank: 6, 6, 0; ";
  const std::string tail = "); every worker must read the same run directory and checkpoint: put --out (and any --resume, "
                           "--branch-from or --init-from file) on a filesystem that every machine mounts";
  EXPECT_EQ(out[0], head + "rank 0 here: step 6, resume from run/checkpoints/c.pt, crc32:0000abcd" + tail);
  EXPECT_EQ(out[1], head + "rank 1 here: step 6, resume from run/checkpoints/c.pt, crc32:0000abcd" + tail);
  EXPECT_EQ(out[2], head + "rank 2 here: step 0, fresh, no checkpoint" + tail);
  // The same step from another file (its checksum) is another start.
  EXPECT_NE(refusals({resumed(6, "crc32:0000abcd"), resumed(6, "crc32:ffff0000")})[1].find("rank 1 differs"), std::string::npos);
}

TEST(OneStart, ManyRanksStayOneReadableLine) {
  std::vector<RunStart> starts(20, RunStart{});
  for (size_t r = 0; r < 2; ++r) starts[r] = resumed(6, "crc32:0000abcd");
  const std::string message = refusals(starts)[0];
  EXPECT_NE(message.find("ranks 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 and 2 more differ from rank 0 "
                         "(steps by rank: 6, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 and 4 more; rank 0 here"),
            std::string::npos) << message;
}

}  // namespace
}  // namespace lrkit::train
