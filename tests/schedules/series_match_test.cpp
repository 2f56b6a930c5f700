// match_series: a logged series against its schedule, and the loop mistake that explains a difference.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules {
namespace {

struct Logged {
  std::vector<double> steps, values;
};

// The rates a loop logged at steps 0, every, 2 every, ... below `total`, as `rate(step)` gives them.
Logged logged(int64_t total, const std::function<double(int64_t)>& rate, int64_t every = 1) {
  Logged out;
  for (int64_t t = 0; t < total; t += every) {
    out.steps.push_back(static_cast<double>(t));
    out.values.push_back(rate(t));
  }
  return out;
}

SeriesMatch match(const Schedule& s, const Logged& l, double tolerance = 1e-6) {
  return match_series(s, l.steps, l.values, tolerance);
}

const Schedule& warm_cosine() {
  static const Schedule s = parse_schedule("cosine(peak=1e-3, floor=1e-5, warmup=10)", 200);
  return s;
}

TEST(SeriesMatch, ALogOfTheScheduleFollowsItWithinTheTolerance) {
  const Schedule& s = warm_cosine();
  auto m = match(s, logged(200, [&](int64_t t) { return s(t); }));
  EXPECT_TRUE(m.follows);
  EXPECT_EQ(m.compared, 200u);
  EXPECT_EQ(m.worst, 0.0);
  // A loop that logs float32 rates, every 7th step, past the schedule's end (its end value).
  m = match(s, logged(260, [&](int64_t t) { return static_cast<double>(static_cast<float>(s(t))); }, 7));
  EXPECT_TRUE(m.follows);
  EXPECT_GT(m.worst, 0.0);
  EXPECT_LT(m.worst, 1e-7);
}

TEST(SeriesMatch, AScheduleReadAheadOrBehindIsNamedWithItsSteps) {
  const Schedule& s = warm_cosine();
  auto m = match(s, logged(200, [&](int64_t t) { return s(t + 1); }));  // scheduler.step() before optimizer.step()
  EXPECT_FALSE(m.follows);
  EXPECT_EQ(m.first_off_row, 0u);
  EXPECT_EQ(m.mistake, SeriesMistake::ReadAhead);
  EXPECT_EQ(m.amount, 1.0);
  m = match(s, logged(200, [&](int64_t t) { return s(std::max<int64_t>(t - 2, 0)); }, 3));
  EXPECT_EQ(m.mistake, SeriesMistake::ReadAhead);
  EXPECT_EQ(m.amount, -2.0);
}

TEST(SeriesMatch, ASchedulerBuiltAnewAtEachResumeIsARestartAtThoseSteps) {
  const Schedule& s = warm_cosine();
  const auto m = match(s, logged(200, [&](int64_t t) { return t < 60 ? s(t) : t < 130 ? s(t - 60) : s(t - 130); }));
  EXPECT_FALSE(m.follows);
  EXPECT_EQ(m.first_off_row, 60u);
  EXPECT_EQ(m.mistake, SeriesMistake::Restarted);
  EXPECT_EQ(m.restarts, (std::vector<int64_t>{60, 130}));
}

// In a log of every 10th step the restart's own row is missing: the first row after it shows the schedule from the
// restart on, and the restart is found in the span before that row. A row the session before the resume logged at
// the resume's step holds the old schedule's rate.
TEST(SeriesMatch, ARestartInALogOfEveryKthStepIsFoundBeforeItsFirstRow) {
  const Schedule& s = warm_cosine();
  const auto rate = [&](int64_t t) { return t < 55 ? s(t) : t < 120 ? s(t - 55) : s(t - 120); };
  Logged l = logged(200, rate, 10);
  l.values[12] = s(120 - 55);  // step 120, logged before the resume there
  auto m = match(s, l);
  EXPECT_EQ(m.mistake, SeriesMistake::Restarted);
  EXPECT_EQ(m.restarts, (std::vector<int64_t>{55, 120}));
  // A schedule run slower is no chain of restarts, one per row, in such a log: each must explain the row after it.
  for (const int64_t every : {10, 100}) {  // rows 0, 100, 200: restarts at 50 and 100 would explain each one row
    m = match(s, logged(201, [&](int64_t t) { return s(t / 2); }, every));
    EXPECT_EQ(m.mistake, SeriesMistake::Slower) << every;
    EXPECT_EQ(m.amount, 2.0) << every;
  }
  // Nor is another schedule.
  const Schedule linear = parse_schedule("linear(peak=1e-3, floor=1e-5, warmup=10)", 200);
  EXPECT_EQ(match(s, logged(200, [&](int64_t t) { return linear(t); }, 10)).mistake, SeriesMistake::None);
}

TEST(SeriesMatch, AScheduleRunFasterOrSlowerIsNamedWithItsFactor) {
  const Schedule& s = warm_cosine();
  auto m = match(s, logged(200, [&](int64_t t) { return s(4 * t); }));  // stepped per micro-batch, 4 per update
  EXPECT_EQ(m.mistake, SeriesMistake::Faster);
  EXPECT_EQ(m.amount, 4.0);
  m = match(s, logged(200, [&](int64_t t) { return s(t / 3); }));  // stepped once every 3 updates
  EXPECT_EQ(m.mistake, SeriesMistake::Slower);
  EXPECT_EQ(m.amount, 3.0);
}

// A loop that counted its run length in micro-batches (or per epoch, or over every worker's batches) built the
// schedule for T' steps: its warmup, decay and end lie elsewhere. Any whole T' from T / 64 to 64 T is found, a
// multiple or not, in logs of every step or of every k-th. Where the rows fit the lengths next to it too (rows that
// end before the decay, sparse rows, or rates that change little with the length), all of them are named.
TEST(SeriesMatch, AScheduleBuiltForAnotherLengthIsNamedWithThatLength) {
  const Schedule& s = warm_cosine();
  for (const int64_t length : {617, 50, 13, 12800}) {
    const Schedule other = parse_schedule(s.to_spec(), length);
    for (const int64_t every : {1, 7}) {
      const auto m = match(s, logged(200, [&](int64_t t) { return other(t); }, every));
      EXPECT_EQ(m.mistake, SeriesMistake::OtherLength) << length << " every " << every;
      EXPECT_LE(m.other_length, length) << every;
      EXPECT_GE(m.other_length_last, length) << every;
      EXPECT_EQ(m.amount, static_cast<double>(m.other_length));
      EXPECT_EQ(m.schedule_length, 200);
      EXPECT_EQ(m.left_end_value_at, 0);
      if (length == 617 || length == 50) {
        EXPECT_EQ(m.other_length_last, m.other_length) << length << " " << every;
      }
    }
  }
  // Rows 0 and 7 (warmup 10) and 14 (its end value) of a 13-step run fit 11 to 14 steps; the first 200 rows of a
  // 12800-step cosine, whose rates differ from the 12799-step one's by 1.6e-8, a span of lengths around it.
  auto m = match(s, logged(200, [&](int64_t t) { return parse_schedule(s.to_spec(), 13)(t); }, 7));
  EXPECT_EQ(m.other_length, 11);
  EXPECT_EQ(m.other_length_last, 14);
  m = match(s, logged(200, [&](int64_t t) { return parse_schedule(s.to_spec(), 12800)(t); }));
  EXPECT_LT(m.other_length_last - m.other_length, 64);
  EXPECT_NE(explain(m).find(" steps instead of 200 (63.95 to 64.06 times as long; its rows fit each): "),
            std::string::npos)
      << explain(m);
  // 400 rows, every 2,500th step of a 2.5e6-step run compared at 1e6: lengths 2.5e6 +- 2 fit, 2.5 times each.
  const Schedule million = parse_schedule(s.to_spec(), 1'000'000);
  const Schedule longest = parse_schedule(s.to_spec(), 2'500'000);
  m = match(million, logged(1'000'000, [&](int64_t t) { return longest(t); }, 2'500));
  EXPECT_EQ(m.other_length, 2'499'998);
  EXPECT_EQ(m.other_length_last, 2'500'002);
  EXPECT_NE(explain(m).find(" steps instead of 1000000 (2.5 times as long; its rows fit each): "), std::string::npos)
      << explain(m);
  // A warmup and a decay given in percent move with the length: a log that reaches the decay pins it.
  const Schedule wsd = parse_schedule("wsd(peak=1e-3, warmup=5%, decay=20%, shape=1-sqrt)", 200);
  const Schedule longer = parse_schedule(wsd.to_spec(), 350);
  m = match(wsd, logged(350, [&](int64_t t) { return longer(t); }, 3));
  EXPECT_EQ(m.mistake, SeriesMistake::OtherLength);
  EXPECT_EQ(m.other_length, 350);
  EXPECT_EQ(explain(m),
            "the log follows the schedule built for 350 steps instead of 200 (1.75 times as long): its warmup, decay "
            "and end lie where a run of that length has them (a scheduler given another run length, such as one "
            "counted in micro-batches or per epoch without dividing by the gradient accumulation or the number of "
            "workers)");
  // One that ends in the stable phase fits every length whose warmup rounds alike and whose decay starts later.
  m = match(wsd, logged(200, [&](int64_t t) { return longer(t); }, 3));
  EXPECT_EQ(explain(m),
            "the log follows the schedule built for any length from 350 to 369 steps instead of 200 (1.75 to 1.845 "
            "times as long; its rows fit each): its warmup, decay and end lie where a run of such a length has them "
            "(a scheduler given another run length, such as one counted in micro-batches or per epoch without "
            "dividing by the gradient accumulation or the number of workers)");
  // A spec that fixes its own length (total=) is the same at every run length: the length is its total= setting.
  const Schedule fixed = parse_schedule("cosine(peak=1e-3, floor=1e-5, warmup=10, total=150)", 200);
  const Schedule cosine300 = parse_schedule("cosine(peak=1e-3, floor=1e-5, warmup=10)", 300);
  m = match(fixed, logged(200, [&](int64_t t) { return cosine300(t); }));
  EXPECT_EQ(m.mistake, SeriesMistake::OtherSetting);
  EXPECT_EQ(m.setting.name, "total");
  EXPECT_EQ(m.setting.value, "300");
  // The rates of steps or milestones do not depend on the length: cut short, a schedule of them would fit any log
  // that holds its rate from some step on, which names no length.
  // (A second milestone at 130 read as "the rows up to 129 follow the schedule built for 50 steps" before this rule.)
  const Schedule steps = parse_schedule("multistep(peak=0.1, milestones=[50, 120], gamma=0.2)", 200);
  for (const char* logged_spec :
       {"multistep(peak=0.1, milestones=[50], gamma=0.2)", "multistep(peak=0.1, milestones=[50, 130], gamma=0.2)"}) {
    const Schedule other = parse_schedule(logged_spec, 200);
    m = match(steps, logged(200, [&](int64_t t) { return other(t); }));
    EXPECT_EQ(m.mistake, SeriesMistake::OtherSetting) << logged_spec;
    EXPECT_EQ(m.setting.name, "milestones") << logged_spec;
  }
}

// One number of the spec given otherwise (a warmup, a floor the spec leaves at its default, a peak beside a fixed
// floor, a milestone) makes every row follow: the number is named with the value, written as plainly as the rows
// allow, and the spec the rows follow. Where the rows fit a span of values, the span is named.
TEST(SeriesMatch, OneOtherNumberOfTheSpecIsNamedWithItsValue) {
  const auto setting = [](const std::string& spec, const std::string& logged_spec, int64_t total, int64_t every) {
    const Schedule s = parse_schedule(spec, total), l = parse_schedule(logged_spec, total);
    const auto m = match(s, logged(total + 1, [&](int64_t t) { return l(t); }, every));
    EXPECT_EQ(m.mistake, SeriesMistake::OtherSetting) << spec << " / " << logged_spec;
    return m.setting;
  };
  auto found = setting("cosine(peak=3e-4, warmup=100)", "cosine(peak=3e-4, warmup=500)", 5000, 1);
  EXPECT_EQ(found.name, "warmup");
  EXPECT_EQ(found.given, "100");
  EXPECT_EQ(found.value, "500");
  EXPECT_EQ(found.spec, "cosine(peak=0.0003, warmup=500)");
  EXPECT_EQ(found.lowest, "500");
  EXPECT_EQ(found.highest, "500");
  found = setting("cosine(peak=3e-4, warmup=100)", "cosine(peak=3e-4, warmup=100, floor=3e-5)", 5000, 7);
  EXPECT_EQ(found.name, "floor");
  EXPECT_EQ(found.given, "");
  EXPECT_EQ(found.value, "10%");
  EXPECT_EQ(found.spec, "cosine(peak=0.0003, floor=10%, warmup=100)");
  found = setting("cosine(peak=6e-4, floor=1e-5, warmup=100)", "cosine(peak=3e-4, floor=1e-5, warmup=100)", 5000, 1);
  EXPECT_EQ(found.name, "peak");
  EXPECT_EQ(found.value, "0.0003");
  found = setting("multistep(peak=0.1, milestones=[50, 120], gamma=0.2)",
                  "multistep(peak=0.1, milestones=[50, 130], gamma=0.2)", 200, 1);
  EXPECT_EQ(found.name, "milestones");
  EXPECT_EQ(found.given, "[50, 120]");
  EXPECT_EQ(found.value, "[50, 130]");
  // A milestone at or past the log's end fits it, as far as the values tried reach (64 times the spec's).
  found = setting("multistep(peak=0.1, milestones=[50, 120], gamma=0.2)",
                  "multistep(peak=0.1, milestones=[50], gamma=0.2)", 200, 1);
  EXPECT_EQ(found.value, "[50, 1000]");
  EXPECT_EQ(found.lowest, "201");
  EXPECT_EQ(found.highest, "7680");
  EXPECT_TRUE(found.highest_is_last);
  // A decay in percent of whole steps: every percent that rounds to the same steps fits.
  found = setting("wsd(peak=1e-3, warmup=2%, decay=20%)", "wsd(peak=1e-3, warmup=2%, decay=10%)", 5000, 1);
  EXPECT_EQ(found.value, "10%");
  EXPECT_EQ(found.lowest, "9.991%");
  EXPECT_EQ(found.highest, "10%");
  const auto words = [](const std::string& spec, const std::string& logged_spec, int64_t total) {
    const Schedule s = parse_schedule(spec, total), l = parse_schedule(logged_spec, total);
    return explain(match(s, logged(total + 1, [&](int64_t t) { return l(t); })));
  };
  EXPECT_EQ(words("cosine(peak=3e-4, warmup=100)", "cosine(peak=3e-4, warmup=500)", 5000),
            "the log follows cosine(peak=0.0003, warmup=500): the spec with warmup=500 instead of 100 (a scheduler "
            "given another value)");
  EXPECT_EQ(words("multistep(peak=0.1, milestones=[50, 120], gamma=0.2)",
                  "multistep(peak=0.1, milestones=[50], gamma=0.2)", 200),
            "the log follows multistep(peak=0.1, milestones=[50, 1000], gamma=0.2): the spec with milestones=[50, "
            "1000] instead of [50, 120]; the rows fit any value from 201 to 7680, the largest tried (a scheduler given "
            "another value)");
  EXPECT_EQ(words("cosine(peak=3e-4, warmup=100)", "cosine(peak=3e-4, warmup=100, floor=10%)", 5000),
            "the log follows cosine(peak=0.0003, floor=10%, warmup=100): the spec with floor=10%, which it leaves at "
            "its default (a scheduler given another value)");
}

// A scheduler given a length shorter than the run is stepped past its end, where schedulers do not hold the end value
// (Hugging Face's cosine rises again, PyTorch's CosineAnnealingLR starts another period): the rows before that end
// name the length, and the first row after it that leaves the end value is named. Two rows off the schedule must lie
// before the end, or one row would name a length.
TEST(SeriesMatch, AScheduleRunPastAShorterLengthIsNamedWhereItLeavesItsEnd) {
  const Schedule s = parse_schedule("cosine(peak=1e-3, warmup=10)", 200);
  const auto hugging_face_cosine = [](int64_t t, int64_t length) {  // get_cosine_schedule_with_warmup's formula
    if (t < 10) return 1e-3 * static_cast<double>(t) / 10.0;
    const double progress = static_cast<double>(t - 10) / static_cast<double>(length - 10);
    return 1e-3 * std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * progress)));
  };
  auto m = match(s, logged(200, [&](int64_t t) { return hugging_face_cosine(t, 80); }));
  EXPECT_EQ(m.mistake, SeriesMistake::OtherLength);
  EXPECT_EQ(m.other_length, 80);
  EXPECT_EQ(m.left_end_value_at, 81);  // its row at 80 is the end value, 0
  EXPECT_NE(explain(m).find("; past that end, from step 81 on, the log leaves its end value: the scheduler ran past "
                            "the length it was given (Hugging Face's cosine rises again there"),
            std::string::npos)
      << explain(m);
  m = match(s, logged(200, [&](int64_t t) { return hugging_face_cosine(t, 80); }, 10));
  EXPECT_EQ(m.mistake, SeriesMistake::OtherLength);
  EXPECT_EQ(m.other_length, 80);
  EXPECT_EQ(m.left_end_value_at, 90);
  // Rows 0 and 50, then the other length's end at 60: one row off the schedule before it names nothing.
  m = match(s, logged(200, [&](int64_t t) { return hugging_face_cosine(t, 60); }, 50));
  EXPECT_EQ(m.first_off_row, 1u);
  EXPECT_EQ(m.mistake, SeriesMistake::None);
}

// A run resumed with another length (max_steps raised to train on): its scheduler restored its step into a schedule
// of the new length, and the rate jumps there. Compared with either length's spec, both lengths are named, and the
// rows on either side of the change.
TEST(SeriesMatch, ARunWhoseLengthChangedAtAResumeIsNamedWithBothLengths) {
  const Schedule first = parse_schedule("cosine(peak=1e-3, floor=1e-5, warmup=10)", 200);
  const Schedule extended = parse_schedule(first.to_spec(), 400);
  const auto rate = [&](int64_t t) { return t < 120 ? first(t) : extended(t); };
  for (const Schedule* compared : {&first, &extended}) {
    auto m = match(*compared, logged(400, rate));
    EXPECT_EQ(m.mistake, SeriesMistake::LengthChanged) << compared->total();
    EXPECT_EQ(m.length_change.before, 200);
    EXPECT_EQ(m.length_change.after, 400);
    EXPECT_EQ(m.length_change.last_step_before, 119);
    EXPECT_EQ(m.length_change.first_step_after, 120);
    EXPECT_EQ(m.amount, compared == &first ? 400.0 : 200.0);  // the length that is not the schedule's
    m = match(*compared, logged(400, rate, 25));
    EXPECT_EQ(m.mistake, SeriesMistake::LengthChanged) << compared->total();
    EXPECT_EQ(m.length_change.last_step_before, 100);
    EXPECT_EQ(m.length_change.first_step_after, 125);
  }
  EXPECT_EQ(explain(match(first, logged(400, rate))),
            "the run's length changed after step 119: the rows up to it follow the schedule built for 200 steps, "
            "those from step 120 on the one built for 400 (a resume with another run length, whose scheduler took "
            "its restored step into a schedule of the new length)");
}

// Where every phase is a share of the run, the schedule run 4 times as fast is, at whole steps, the schedule of T / 4
// steps: the mistake named says so, since the rows cannot tell the two apart. With a warmup of fixed steps they differ.
TEST(SeriesMatch, AFasterScheduleThatIsAlsoAnotherLengthSaysSo) {
  const Schedule s = parse_schedule("wsd(peak=1e-3, warmup=10%, decay=20%)", 200);
  auto m = match(s, logged(200, [&](int64_t t) { return s(4 * t); }));
  EXPECT_EQ(m.mistake, SeriesMistake::Faster);
  EXPECT_EQ(m.other_length, 50);
  EXPECT_EQ(m.other_length_last, 50);
  EXPECT_NE(explain(m).find("micro-batches per update); the same rates are the schedule built for 50 steps, a "
                            "scheduler given that run length (these rows cannot tell the two apart)"),
            std::string::npos)
      << explain(m);
  m = match(s, logged(200, [&](int64_t t) { return s(t / 2); }, 2));  // even rows only: as slow is twice the length
  EXPECT_EQ(m.mistake, SeriesMistake::Slower);
  EXPECT_EQ(m.other_length, 400);
  m = match(warm_cosine(), logged(200, [&](int64_t t) { return warm_cosine()(4 * t); }));
  EXPECT_EQ(m.mistake, SeriesMistake::Faster);
  EXPECT_EQ(m.other_length, 0);  // its warmup of 10 steps is 2.5 steps long in the log
}

TEST(SeriesMatch, ScaledRatesAreNamedWithTheirScale) {
  const Schedule& s = warm_cosine();
  const auto m = match(s, logged(200, [&](int64_t t) { return 0.25 * s(t); }));
  EXPECT_EQ(m.mistake, SeriesMistake::Scaled);
  EXPECT_NEAR(m.amount, 0.25, 1e-15);
}

TEST(SeriesMatch, AnotherScheduleIsExplainedByNoMistake) {
  const Schedule& s = warm_cosine();
  const Schedule linear = parse_schedule("linear(peak=1e-3, floor=1e-5, warmup=10)", 200);
  const auto m = match(s, logged(200, [&](int64_t t) { return linear(t); }));
  EXPECT_FALSE(m.follows);
  EXPECT_EQ(m.mistake, SeriesMistake::None);
  EXPECT_EQ(m.first_off_row, 11u);  // the warmups agree; the decays part at once
  EXPECT_GT(m.worst, 0.5);
}

// The first differing row and the worst come with their values; a tolerance that is no finite number >= 0 is refused.
TEST(SeriesMatch, TheRowsItReportsCarryTheirValues) {
  const Schedule& s = warm_cosine();
  const auto m = match(s, logged(200, [&](int64_t t) { return t < 60 ? s(t) : t < 130 ? s(t - 60) : s(t - 130); }));
  EXPECT_EQ(m.first_off_detail.step, 60);
  EXPECT_EQ(m.first_off_detail.logged, s(0));
  EXPECT_EQ(m.first_off_detail.scheduled, s(60));
  EXPECT_EQ(m.first_off_detail.relative, relative_difference(s(0), s(60)));
  EXPECT_EQ(m.worst_detail.step, static_cast<int64_t>(m.worst_row));
  EXPECT_EQ(m.worst_detail.relative, m.worst);
  for (const double bad : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()})
    EXPECT_THROW(match_series(s, {0}, {0}, bad), std::invalid_argument) << bad;
}

TEST(SeriesMatch, EveryMistakeHasANameAndWords) {
  SeriesMatch m;
  EXPECT_EQ(explain(m), "");
  EXPECT_STREQ(mistake_name(m.mistake), "none");
  const auto words = [&](SeriesMistake mistake, double amount) {
    m.mistake = mistake;
    m.amount = amount;
    return explain(m);
  };
  EXPECT_EQ(words(SeriesMistake::ReadAhead, -2),
            "the log is the schedule 2 steps behind: update t ran at its rate of step t - 2, the first at its first "
            "rate (a scheduler stepped late, or first stepped after the first updates)");
  EXPECT_EQ(words(SeriesMistake::Slower, 3),
            "the log runs the schedule 3 times as slow: update t ran at its rate of step floor(t / 3) (a scheduler "
            "stepped once every 3 updates)");
  EXPECT_EQ(words(SeriesMistake::Scaled, 0.25),
            "the log is the schedule times 0.25 (another peak, or a parameter group's own rate)");
  m.restarts = {60, 130};
  EXPECT_EQ(words(SeriesMistake::Restarted, 2),
            "the schedule started over at steps 60, 130 (a resume that built a new scheduler without loading its "
            "state)");
  const char* names[] = {"read_ahead",     "restarted", "faster",       "slower", "other_length",
                         "length_changed", "scaled",    "other_setting"};
  const SeriesMistake kinds[] = {SeriesMistake::ReadAhead,     SeriesMistake::Restarted, SeriesMistake::Faster,
                                 SeriesMistake::Slower,        SeriesMistake::OtherLength,
                                 SeriesMistake::LengthChanged, SeriesMistake::Scaled,    SeriesMistake::OtherSetting};
  for (size_t i = 0; i < 8; ++i) EXPECT_STREQ(mistake_name(kinds[i]), names[i]);
}

// A schedule's infinite rate never matches a finite log (inf / inf would be NaN, which compares as within).
TEST(SeriesMatch, AnInfiniteRateIsInfinitelyFarFromAnyFiniteOne) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(relative_difference(1.0, inf), inf);
  EXPECT_EQ(relative_difference(inf, inf), 0.0);
  EXPECT_EQ(relative_difference(0.0, 0.0), 0.0);
  EXPECT_EQ(relative_difference(1.0, 0.75), 0.25);
  const Schedule growing = parse_schedule("exponential(peak=1, gamma=1e200)");
  const auto m = match_series(growing, {0, 1, 2}, {1, 1e200, 1e300}, 1e-6);
  EXPECT_FALSE(m.follows);
  EXPECT_EQ(m.first_off_row, 2u);
}

TEST(SeriesMatch, RowsItCannotCompareAreRefusedByRow) {
  const Schedule& s = warm_cosine();
  const auto refusal = [&](std::vector<double> steps, std::vector<double> values) {
    try {
      match_series(s, steps, values, 1e-6);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  EXPECT_EQ(refusal({}, {}), "the series has no rows to compare");
  EXPECT_EQ(refusal({0, 1}, {1e-3}), "the series has 2 steps for 1 values");
  EXPECT_EQ(refusal({0, 1.5}, {0, 1e-4}), "row 2: step 1.5 is not a whole number of updates from 0 to 1e15");
  EXPECT_EQ(refusal({-1}, {0}), "row 1: step -1 is not a whole number of updates from 0 to 1e15");
  EXPECT_EQ(refusal({0, 5, 5}, {0, 1e-4, 1e-4}), "row 3: step 5 does not follow step 5 (the steps must increase)");
  EXPECT_EQ(refusal({0, 1}, {0, std::nan("")}), "row 2 (step 1): the rate nan is not finite");
}

}  // namespace
}  // namespace lrkit::schedules
