#include "lrkit/schedules/wsds_plan.hpp"

#include <gtest/gtest.h>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {
namespace {

TEST(WsdsPlan, PaperExampleBoundariesAndTotal) {
  const auto plan = plan_wsds({12500, 25000, 50000}, proportional_decays({12500, 25000, 50000}, 0.1));
  std::vector<int64_t> boundaries;
  for (const auto& seg : plan.segments) boundaries.push_back(seg.end);
  boundaries.pop_back();  // the last end is the total
  EXPECT_EQ(boundaries, (std::vector<int64_t>{11250, 12500, 23750, 26250, 48750}));
  EXPECT_EQ(plan.total, 53750);
  EXPECT_EQ(plan.checkpoints, (std::vector<int64_t>{12500, 26250, 53750}));
  EXPECT_EQ(plan.decays, (std::vector<int64_t>{1250, 2500, 5000}));
}

TEST(WsdsPlan, CheckpointsAreBudgetPlusEarlierDecays) {
  const std::vector<int64_t> budgets = {1000, 1700, 4000, 9000};
  const std::vector<int64_t> decays = {100, 300, 300, 2000};
  const auto plan = plan_wsds(budgets, decays);
  int64_t spent = 0;
  for (size_t i = 0; i < budgets.size(); ++i) {
    EXPECT_EQ(plan.checkpoints[i], budgets[i] + spent);
    spent += decays[i];
  }
  EXPECT_EQ(plan.total, budgets.back() + spent - decays.back());
}

TEST(WsdsPlan, RejectsBadBudgetsWithTheirValues) {
  EXPECT_THROW(plan_wsds({}, {}), std::invalid_argument);
  EXPECT_THROW(plan_wsds({100, 100}, {10, 10}), std::invalid_argument);
  EXPECT_THROW(plan_wsds({100}, {0}), std::invalid_argument);
  EXPECT_THROW(plan_wsds({100}, {101}), std::invalid_argument);
  try {
    plan_wsds({1000, 1100}, {100, 500});  // decay 2 would start at 600, before decay 1 (900)
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("start at 600"), std::string::npos) << e.what();
  }
}

TEST(WsdsSchedule, DecaysThenJumpsBackToPeakAtEachCheckpoint) {
  const auto s = parse_schedule("wsds(peak=1e-3, budgets=[12500, 25000, 50000], decay=10%, floor=10%)", std::nullopt);
  EXPECT_EQ(s.total(), 53750);
  EXPECT_EQ(s.checkpoints(), (std::vector<int64_t>{12500, 26250, 53750}));
  EXPECT_DOUBLE_EQ(s(11249), 1e-3);
  EXPECT_LT(s(12499), 1.01e-4);
  EXPECT_DOUBLE_EQ(s(12500), 1e-3);  // straight back to the peak, no rewarmup
  EXPECT_DOUBLE_EQ(s(23749), 1e-3);
  EXPECT_LT(s(26249), 1.01e-4);
  EXPECT_DOUBLE_EQ(s(26250), 1e-3);
  EXPECT_NEAR(s(53750), 1e-4, 1e-18);
  int jumps = 0;
  for (const auto& p : s.phases()) jumps += p.jumps_at_begin;
  EXPECT_EQ(jumps, 2);
}

TEST(WsdsSchedule, WarmupStaysInsideTheFirstPlateauAndKeepsCheckpoints) {
  const auto s = parse_schedule("wsds(peak=1, budgets=[1000, 2000], decay=[100, 200], warmup=50)", std::nullopt);
  EXPECT_EQ(s.checkpoints(), (std::vector<int64_t>{1000, 2100}));
  EXPECT_DOUBLE_EQ(s(25), 0.5);
  EXPECT_DOUBLE_EQ(s(900), 1.0);
  EXPECT_THROW(parse_schedule("wsds(peak=1, budgets=[1000, 2000], warmup=950)", std::nullopt), SpecError);
  EXPECT_THROW(parse_schedule("wsds(peak=1, budgets=[1000, 2000], decay=[100])", std::nullopt), SpecError);
}

// The error points at the entry it names, not at 'decay' whatever went wrong.
TEST(WsdsSchedule, ARefusedPlanPointsAtTheBudgetOrDecayEntryItNames) {
  const auto refused = [](const std::string& spec) {
    try {
      parse_schedule(spec, std::nullopt);
    } catch (const SpecError& e) {
      return std::make_pair(e.token(), std::string(e.what()));
    }
    return std::make_pair(std::string("accepted"), std::string());
  };
  auto [token, message] = refused("wsds(peak=1e-3, budgets=[100, 50], decay=10%)");
  EXPECT_EQ(token, "50") << message;
  EXPECT_NE(message.find("budgets must increase strictly (budget 2 = 50 after 100)"), std::string::npos) << message;
  std::tie(token, message) = refused("wsds(peak=1e-3, budgets=[1000, 1100], decay=[100, 500])");
  EXPECT_EQ(token, "500") << message;
  EXPECT_NE(message.find("decay 2 would start at 600"), std::string::npos) << message;
  std::tie(token, message) = refused("wsds(peak=1e-3, budgets=[100, 200], decay=150)");
  EXPECT_EQ(token, "150") << message;  // one length for every budget: the whole value
  EXPECT_NE(message.find("decay 1 must be between 1 and its budget 100"), std::string::npos) << message;
  std::tie(token, message) = refused("wsds(peak=1e-3, budgets=[1000, 1100, 1100])");
  EXPECT_EQ(token, "1100") << message;
  EXPECT_NE(message.find("budget 3 = 1100 after 1100"), std::string::npos) << message;
  std::tie(token, message) = refused("wsds(peak=1e-3, budgets=[], decay=10%)");
  EXPECT_NE(message.find("at least one budget"), std::string::npos) << message;
}

}  // namespace
}  // namespace lrkit::schedules

namespace lrkit::schedules {
namespace {

TEST(WsdsSchedule, ARunShorterThanItsOwnLengthIsRefusedNotCut) {
  const std::string spec = "wsds(peak=1e-3, budgets=[800, 1000], decay=10%)";  // checkpoints 800, 1080
  EXPECT_EQ(parse_schedule(spec, 1080).total(), 1080);
  EXPECT_EQ(parse_schedule(spec, 2000).checkpoints().back(), 1080);  // longer runs keep the end value
  try {
    parse_schedule(spec, 1000);
    FAIL() << "a 1000-step run of a schedule that ends at 1080 was accepted";
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("ends before the schedule's last checkpoint at step 1080"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace lrkit::schedules
