// read_log_shape: what a log's rows tell before any family is tried (the fit's starting numbers).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "crossing_search.hpp"
#include "log_shape.hpp"
#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules::detail {
namespace {

LogShape shape_of(const std::string& spec, int64_t total, int64_t every = 1, int64_t first = 0) {
  const Schedule s = parse_schedule(spec, total);
  std::vector<int64_t> steps;
  std::vector<double> values;
  for (int64_t t = first; t < total; t += every) {
    steps.push_back(t);
    values.push_back(s(t));
  }
  return read_log_shape(steps, values, 1e-6);
}

// The warmup's start is step 0's rate, or where the line through the warmup's last two rows meets step 0 (a log that
// starts later); a warmup from 0 stays one from 0 in a float32 log, whose line misses 0 by its rounding.
TEST(LogShape, AWarmupsStartAndEnd) {
  auto s = shape_of("cosine(peak=0.5, floor=1e-4, warmup=50, warmup_init=0.005)", 500);
  EXPECT_EQ(s.warmup, 50);
  EXPECT_EQ(s.warmup_init, 0.005);
  EXPECT_EQ(s.peak, 0.5);
  EXPECT_EQ(s.peak_row, 50u);
  s = shape_of("cosine(peak=0.5, floor=1e-4, warmup=50, warmup_init=0.005)", 500, 10, 10);
  EXPECT_EQ(s.warmup, 50);
  EXPECT_DOUBLE_EQ(s.warmup_init, 0.005);
  s = shape_of("cosine(peak=0.5, warmup=45)", 500, 10, 10);  // the warmup's end lies between rows 40 and 50
  EXPECT_EQ(s.warmup, 45);
  EXPECT_EQ(s.warmup_init, 0.0);
  const Schedule hf = parse_schedule("linear(peak=3e-4, warmup=100)", 1000);
  std::vector<int64_t> steps;
  std::vector<double> values;
  for (int64_t t = 10; t <= 1000; t += 10) {
    steps.push_back(t);
    values.push_back(static_cast<float>(hf(t)));
  }
  s = read_log_shape(steps, values, 1e-6);
  EXPECT_EQ(s.warmup_init, 0.0);
  EXPECT_EQ(s.warmup, 100);
  EXPECT_EQ(s.peak, 3e-4);  // 0.000300000014 as float32
  // A warmup that ends between two rows, a decay following at once: the peak between the largest rate and the line.
  s = shape_of("cosine(peak=5e-4, warmup=469)", 2000, 50, 50);
  EXPECT_EQ(s.peak, 5e-4);
  EXPECT_EQ(s.warmup, 469);
  EXPECT_LT(s.largest, 5e-4);
  // One row before the peak row: a line from 0 through it that reaches the peak at a whole step is the warmup (18 steps
  // from 0), one that does not is not (20 steps from 0.1 of the peak, Hugging Face's min_lr_ratio).
  s = read_log_shape({10, 20}, {1e-3 * 10 / 18, 1e-3}, 1e-6);
  EXPECT_EQ(s.warmup, 18);
  EXPECT_EQ(s.warmup_init, 0.0);
  s = read_log_shape({10, 20}, {1e-3 * 0.55, 1e-3}, 1e-6);
  EXPECT_EQ(s.warmup, 20);
  EXPECT_DOUBLE_EQ(s.warmup_init, 1e-4);
}

// A warmup that is no line: cosine or 1-sqrt, where every warmup row follows it up to the first row at the peak.
TEST(LogShape, AWarmupsRamp) {
  for (const char* ramp : {"cosine", "1-sqrt"}) {
    const auto s = shape_of(std::string("constant(peak=1e-3, warmup=100, warmup_init=1e-4, warmup_shape=") + ramp + ")",
                            300, 10);
    EXPECT_EQ(s.warmup_shape, ramp);
    EXPECT_EQ(s.warmup, 100);
    EXPECT_EQ(s.warmup_init, 1e-4);
  }
  EXPECT_EQ(shape_of("constant(peak=1e-3, warmup=100, warmup_init=1e-4)", 300, 10).warmup_shape, "linear");
  // An exp warmup is none of them: its line is read, and no family tried fits it.
  EXPECT_EQ(shape_of("constant(peak=1e-3, warmup=100, warmup_init=1e-4, warmup_shape=exp)", 300, 10).warmup_shape,
            "linear");
}

// A step schedule's levels, each at the row that first shows it; a smooth decay has too many to be one.
TEST(LogShape, AStepSchedulesLevels) {
  auto s = shape_of("multistep(peak=0.1, milestones=[50, 120, 160], gamma=0.2)", 200);
  ASSERT_EQ(s.levels.size(), 3u);
  EXPECT_EQ(s.levels[1].at, 120);
  EXPECT_EQ(s.levels[1].after, 119);
  EXPECT_DOUBLE_EQ(s.levels[2].rate, 0.1 * 0.2 * 0.2 * 0.2);
  ASSERT_TRUE(s.leaves_peak);
  EXPECT_EQ(s.leaves_peak->at, 50);
  EXPECT_TRUE(s.climbs.empty());
  s = shape_of("cosine(peak=0.1)", 200);
  EXPECT_TRUE(s.levels.empty());
  ASSERT_TRUE(s.leaves_peak);
  EXPECT_EQ(s.leaves_peak->at, 1);
}

// Restarts and cycles: the first two climbs, how many, the second cycle's top; the rows between a climb's row and
// the one before it bound where it happened.
TEST(LogShape, ClimbsAfterThePeak) {
  auto s = shape_of("restarts(peak=0.1, period=50, mult=2, peak_decay=0.5, floor=1e-4)", 700);
  ASSERT_EQ(s.climbs.size(), 2u);
  EXPECT_EQ(s.climbs[0].at, 50);
  EXPECT_EQ(s.climbs[1].at, 150);
  EXPECT_EQ(s.climb_count, 3u);  // at 50, 150 and 350
  EXPECT_DOUBLE_EQ(s.second_top, 0.05);
  s = shape_of("triangular(peak=0.1, floor=0.01, up=20, down=30)", 200, 10);
  EXPECT_EQ(s.warmup, 20);
  EXPECT_EQ(s.warmup_init, 0.01);
  ASSERT_EQ(s.climbs.size(), 2u);
  EXPECT_EQ(s.climbs[0].after, 50);  // the trough
  EXPECT_EQ(s.climbs[0].at, 60);
  EXPECT_EQ(s.climb_count, 3u);  // at 60, 110 and 160
}

// A decay that ends before the run holds its floor to the end; a log ending mid-decay holds nothing.
TEST(LogShape, AHeldEnd) {
  auto s = shape_of("wsd(peak=3e-4, floor=3e-5, warmup=100, decay=200, shape=linear, total=900)", 1000);
  ASSERT_TRUE(s.hold);
  EXPECT_EQ(s.hold->at, 900);
  EXPECT_DOUBLE_EQ(s.hold->rate, 3e-5);
  EXPECT_FALSE(shape_of("cosine(peak=0.1)", 200).hold);
  EXPECT_FALSE(shape_of("constant(peak=0.1)", 200).hold);  // at the peak: no decay ended
}

TEST(LogShape, PlainestNumbers) {
  EXPECT_EQ(plainest_whole(99, 105), 100);
  EXPECT_EQ(plainest_whole(191, 200), 200);
  EXPECT_EQ(plainest_whole(101, 109), 109);  // the highest among equals
  EXPECT_EQ(plainest_whole(5, 5), 5);
  EXPECT_EQ(plainest_whole(7, 3), 3);
  EXPECT_EQ(plainest_whole(1, 4'000'000'000'000'000'000), 4'000'000'000'000'000'000);
  EXPECT_EQ(plainest_between(0.000499, 0.000533, 0.000499), 0.0005);
  EXPECT_EQ(plainest_between(1.744, 1.758, 1.744), 1.75);
  EXPECT_EQ(plainest_between(0.3, 0.3, 0.3), 0.3);
  EXPECT_EQ(plainest_near(0.000500000024, 2.5e-7), 0.0005);
  EXPECT_EQ(plainest_near(0.12345, 0.0), 0.12345);
}

}  // namespace
}  // namespace lrkit::schedules::detail
