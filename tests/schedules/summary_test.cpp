#include "lrkit/schedules/summary.hpp"

#include <gtest/gtest.h>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {
namespace {

TEST(Summary, WsdReportsWarmupDecayAndFinal) {
  const auto s = summarize(parse_schedule("wsd(peak=3e-4, warmup=2%, decay=20%, floor=1e-5)", 1000), 1000);
  EXPECT_DOUBLE_EQ(s.peak, 3e-4);
  EXPECT_EQ(s.peak_step, 20);
  EXPECT_EQ(s.warmup_end, 20);
  ASSERT_TRUE(s.decay_start.has_value());
  EXPECT_EQ(*s.decay_start, 800);
  EXPECT_DOUBLE_EQ(s.final_value, 1e-5);
  EXPECT_TRUE(s.checkpoints.empty());
  ASSERT_EQ(s.phases.size(), 3u);
}

TEST(Summary, ConstantHasNoDecayAndWsdsListsCheckpoints) {
  EXPECT_FALSE(summarize(parse_schedule("constant(1)", 10), 10).decay_start.has_value());
  const auto w = summarize(parse_schedule("wsds(peak=1, budgets=[100, 200])", std::nullopt), 210);
  EXPECT_EQ(w.checkpoints, (std::vector<int64_t>{100, 210}));
  EXPECT_EQ(*w.decay_start, 90);
}

}  // namespace
}  // namespace lrkit::schedules
