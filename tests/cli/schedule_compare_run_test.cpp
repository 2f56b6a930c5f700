// `lrkit schedule SPEC --compare RUN` on a run `lrkit train` made: its log follows the spec it trained under, through
// a resume, and not another.
#include <gtest/gtest.h>

#include <string>

#include "run_command.hpp"
#include "tiny_run.hpp"

namespace {

using lrkit::testing::run_lrkit;

TEST(ScheduleCompareRun, ATrainedRunFollowsItsSpecThroughAResumeAndNoOther) {
  // The spec holds its own length, so the session that stops at 6 trains the first half of the 12-step schedule.
  const auto dir = lrkit::testing::two_session_tiny_run("compare_run", "cosine(peak=1e-2, warmup=2, total=12)");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "a session of the run failed";
  auto r = run_lrkit("schedule 'cosine(peak=1e-2, warmup=2)' --steps 12 --tolerance 0 --compare " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(": 12 rows of /train/lr, steps 0..11, against cosine(peak=0.01, warmup=2) (12 steps)\n"
                       "follows it: the worst relative difference is 0 at step 0 (tolerance 0)\n"),
            std::string::npos)
      << r.out;
  r = run_lrkit("schedule 'cosine(peak=1e-2, warmup=3)' --steps 12 --compare " + dir);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("differs from step 1 (logged 0.005, schedule 0.0033"), std::string::npos) << r.out;
}

}  // namespace
