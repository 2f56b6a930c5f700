// The logs a caller names: paths, run directories, and globs in the order of their ranks.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "lrkit/diagnostics/rank_log.hpp"
#include "test_files.hpp"

namespace lrkit::diagnostics {
namespace {

using lrkit::testing::scratch_dir;
using lrkit::testing::write_text;

TEST(RankLogPaths, AGlobsFilesComeInTheOrderOfTheirRanks) {
  const std::string dir = (scratch_dir() / "per_rank").string();
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  for (const char* name : {"rank10.csv", "rank9.csv", "rank0.csv", "rank1.csv", "rank2.csv", "other.csv"})
    write_text("per_rank/" + std::string(name), "step,loss,grad_norm\n0,1,1\n");
  // Plain sorting put rank10 between rank1 and rank2: rank 2's rows read as rank 3's, and so on.
  EXPECT_EQ(rank_log_paths({dir + "/rank*.csv"}),
            (std::vector<std::string>{dir + "/rank0.csv", dir + "/rank1.csv", dir + "/rank2.csv", dir + "/rank9.csv",
                                      dir + "/rank10.csv"}));
  EXPECT_EQ(rank_log_paths({dir + "/rank?.csv", dir + "/other.csv"}),
            (std::vector<std::string>{dir + "/rank0.csv", dir + "/rank1.csv", dir + "/rank2.csv", dir + "/rank9.csv",
                                      dir + "/other.csv"}));
  try {
    rank_log_paths({dir + "/worker*.csv"});
    FAIL() << "a glob that matches nothing was taken";
  } catch (const RankLogError& e) {
    EXPECT_EQ(std::string(e.what()), "no file matches '" + dir + "/worker*.csv'");
  }
}

TEST(RankLogPaths, APathThatExistsIsItselfAndARunDirectoryItsLog) {
  const std::string bracketed = write_text("ranks[1].csv", "step,rank,loss,grad_norm\n0,0,1,1\n");
  write_text("ranks1.csv", "step,rank,loss,grad_norm\n0,0,1,1\n");  // what [1] would match as a pattern
  EXPECT_EQ(rank_log_paths({bracketed}), std::vector<std::string>{bracketed});
  const std::string run = (scratch_dir() / "run").string();
  ASSERT_EQ(::mkdir(run.c_str(), 0755), 0);
  EXPECT_EQ(rank_log_paths({run}), std::vector<std::string>{run}) << "no log in it: the reader names the directory";
  write_text("run/log.h5", "");
  EXPECT_EQ(rank_log_paths({run}), std::vector<std::string>{run + "/log.h5"});
  EXPECT_EQ(rank_log_paths({"/no/such/log.csv"}), std::vector<std::string>{"/no/such/log.csv"}) << "the reader's to name";
}

}  // namespace
}  // namespace lrkit::diagnostics
