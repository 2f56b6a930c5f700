// run_files.hpp: where a run directory keeps its files, found without LibTorch.
#include "lrkit/train/run_files.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "test_files.hpp"

namespace lrkit::train {
namespace {

TEST(RunFiles, ACheckpointsNameGivesItsStepAndNoOtherNameGivesOne) {
  for (const int64_t step : {0LL, 7LL, 123456789012LL}) EXPECT_EQ(checkpoint_step_of(checkpoint_file_name(step)), step);
  EXPECT_EQ(checkpoint_file_name(300), "step_0000000300.pt");
  for (const char* other : {"step_0000000300.replica_1.pt", "step_0000000300.pt.tmp", "step_.pt", "step_-1.pt",
                            "step_12x.pt", "log.h5", "astep_0000000300.pt", "step_0000000300.pth"})
    EXPECT_FALSE(checkpoint_step_of(other)) << other;
}

// Replica files and a save's leftovers are no checkpoints of the run; checkpoints order by their steps.
TEST(RunFiles, TheNewestCheckpointIsTheLargestStepsMainFile) {
  const auto run = (lrkit::testing::scratch_dir() / "run_files_run").string();
  EXPECT_FALSE(latest_checkpoint(run)) << "no directory, no checkpoint";
  std::filesystem::create_directories(checkpoint_dir(run));
  for (const int64_t step : {20LL, 10000000000LL, 3LL, 9999999999LL}) std::ofstream(checkpoint_path(run, step)) << "x";
  std::ofstream(replica_checkpoint_path(checkpoint_path(run, 500), 1)) << "x";
  std::ofstream(checkpoint_path(run, 900) + ".tmp") << "x";
  const auto files = checkpoints_oldest_first(run);
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(files.front().string(), checkpoint_path(run, 3));
  EXPECT_EQ(files[2].string(), checkpoint_path(run, 9999999999));
  EXPECT_EQ(latest_checkpoint(run), checkpoint_path(run, 10000000000)) << "11 digits: its name sorts before 9999999999's";
}

// A save killed mid-write leaves ".NAME.tmp" beside where NAME was to be: a main file's or a replica's is removed,
// with its size; no other file is touched (a name of the user's, a checkpoint, a hidden file that is no temporary).
TEST(RunFiles, ThePartialCheckpointsOfKilledSavesAreRemovedAndNothingElse) {
  const auto run = (lrkit::testing::scratch_dir() / "run_files_partial").string();
  EXPECT_TRUE(remove_partial_checkpoints(run).empty()) << "no directory, nothing to remove";
  const auto dir = std::filesystem::path(checkpoint_dir(run));
  std::filesystem::create_directories(dir / ".step_0000000400.pt.tmp");  // a directory so named is no save's
  std::ofstream(dir / ".step_0000000300.pt.tmp") << "half";
  std::ofstream(dir / ".step_0000000300.replica_12.pt.tmp") << "half a replica";
  const std::vector<std::string> kept = {"step_0000000200.pt", "step_0000000200.replica_1.pt", ".notes.tmp",
                                         "step_0000000300.pt.tmp", ".step_0000000300.pt", ".step_x.pt.tmp",
                                         ".step_0000000300.replica_.pt.tmp", ".step_0000000300.replica_1x.pt.tmp",
                                         ".log.h5.4242-0.tmp"};
  for (const std::string& name : kept) std::ofstream(dir / name) << "x";
  const auto removed = remove_partial_checkpoints(run);
  ASSERT_EQ(removed.size(), 2u);
  EXPECT_EQ(removed[0].path, (dir / ".step_0000000300.pt.tmp").string());
  EXPECT_EQ(removed[0].bytes, 4u);
  EXPECT_EQ(removed[1].path, (dir / ".step_0000000300.replica_12.pt.tmp").string());
  EXPECT_EQ(removed[1].bytes, 14u);
  for (const std::string& name : kept) EXPECT_TRUE(std::filesystem::exists(dir / name)) << name;
  EXPECT_TRUE(std::filesystem::is_directory(dir / ".step_0000000400.pt.tmp"));
  EXPECT_TRUE(remove_partial_checkpoints(run).empty());
}

}  // namespace
}  // namespace lrkit::train
