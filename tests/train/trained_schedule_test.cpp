// trained_schedule.hpp: a resume may change the schedule's spec or length only where every trained update keeps its rate.
#include "lrkit/train/trained_schedule.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace lrkit::train {
namespace {

CheckpointInfo trained(const std::string& spec, int64_t steps, int64_t step) {
  CheckpointInfo info;
  info.schedule_spec = spec;
  info.schedule_steps = steps;
  info.step = step;
  return info;
}

// A budget sweep's WSD main run stretched to a larger budget: its spec's total moves from 40000 to 80000, and the
// warmup and plateau it trained stay. Past the plateau of the shorter total (decay from step 32000) they would part.
TEST(TrainedSchedule, AWsdMainRunStretchedKeepsTheRatesItTrained) {
  const std::string before = "wsd(peak=1e-2, warmup=5, decay=20%, total=40000)";
  const std::string after = "wsd(peak=1e-2, warmup=5, decay=20%, total=80000)";
  EXPECT_FALSE(first_rate_change(before, 33, after, 65, 33));
  EXPECT_FALSE(first_rate_change("ckpt.pt", trained(before, 33, 33), after, 65));
  const auto parted = first_rate_change(before, 40000, after, 80000, 40000);
  ASSERT_TRUE(parted);
  EXPECT_EQ(parted->step, 32001);  // the decay's first step is the peak still
  EXPECT_EQ(parted->now, 1e-2);
  EXPECT_LT(parted->then, 1e-2);
}

// A cosine's rates depend on its length from the first update after the warmup; a spec that changes the warmup parts
// there. Only the updates before info.step count: a run that stopped in its warmup may change what follows.
TEST(TrainedSchedule, NamesTheFirstUpdateThatWouldTrainAtAnotherRate) {
  const auto longer = first_rate_change("ckpt.pt", trained("cosine(peak=1, warmup=2)", 12, 12), "cosine(peak=1, warmup=2)", 20);
  ASSERT_TRUE(longer);
  EXPECT_EQ(longer->step, 3);
  EXPECT_DOUBLE_EQ(longer->then, 0.5 * (1 + std::cos(M_PI * 1 / 10)));
  EXPECT_DOUBLE_EQ(longer->now, 0.5 * (1 + std::cos(M_PI * 1 / 18)));
  const auto warmup = first_rate_change("ckpt.pt", trained("cosine(peak=1, warmup=2)", 12, 6), "cosine(peak=1, warmup=4)", 12);
  ASSERT_TRUE(warmup);
  EXPECT_EQ(warmup->step, 1);
  EXPECT_FALSE(first_rate_change("ckpt.pt", trained("constant(1, warmup=4)", 12, 2), "cosine(peak=1, warmup=4)", 12));
}

// The same spec and length compare nothing (a table's file need not be there any more); a checkpoint written before
// it recorded its length was trained for the length asked now.
TEST(TrainedSchedule, TheSameScheduleBuildsNothingAndAnUnbuildableOneNamesTheCheckpoint) {
  const std::string gone = "table(file=/nonexistent/lr.csv)";
  EXPECT_FALSE(first_rate_change("ckpt.pt", trained(gone, 12, 12), gone, 12));
  EXPECT_FALSE(first_rate_change("ckpt.pt", trained(gone, 0, 12), gone, 12));
  try {
    first_rate_change("ckpt.pt", trained(gone, 12, 12), "constant(1)", 12);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("checkpoint 'ckpt.pt' was trained with schedule '" + gone + "'; its rates cannot be compared with "
                         "those of 'constant(1)': ", 0), 0u) << what;
    EXPECT_NE(what.find("/nonexistent/lr.csv"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace lrkit::train
