// The plan of a budget sweep with decay branches: each budget's fork from the main run, the steps it saves, and the
// refusals.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/spec_error.hpp"
#include "lrkit/schedules/usable_rates.hpp"

namespace lrkit::schedules {
namespace {

// Wen et al.'s setting of the README's experiment (b): decays of 10 % of each budget, linear to 10 % of the peak.
const std::string kWsd = "wsd(peak=3e-3, warmup=50, decay=10%, shape=linear, floor=10%)";

TEST(DecayBranches, EachBranchForksWhereItsDecayFirstChangesTheRate) {
  const auto plan = decay_branches(kWsd, {500, 1000, 2000});
  ASSERT_EQ(plan.branches.size(), 3u);
  EXPECT_EQ(plan.main.total(), 2'000'000);
  // ALGORITHMS.md section 2 forks at B - D; the update at B - D still runs at the peak in both, so the first
  // update of the branch's own is the next.
  const int64_t forks[] = {451, 901, 1801};
  for (size_t i = 0; i < 3; ++i) {
    const auto& b = plan.branches[i];
    EXPECT_EQ(b.fork, forks[i]) << b.budget;
    EXPECT_EQ(b.schedule.total(), b.budget);
    for (int64_t step = 0; step < b.fork; ++step) ASSERT_EQ(b.schedule(step), plan.main(step)) << b.budget << " " << step;
    EXPECT_LT(b.schedule(b.fork), plan.main(b.fork));
    // The branch's schedule is the separate run's: the same spec stretched to the budget.
    EXPECT_EQ(b.schedule.to_spec(), parse_schedule(kWsd, b.budget).to_spec());
  }
  EXPECT_EQ(plan.main_steps(), 1801);
  EXPECT_EQ(plan.forks(), (std::vector<int64_t>{451, 901, 1801}));
  // 1801 + 49 + 99 + 199 = 2148 updates for the three budgets, 0.61x of 3500 in separate runs (README, sweep (b)).
  EXPECT_EQ(plan.steps(), 2148);
}

TEST(DecayBranches, AWarmupInPercentForksAtOnceAndBudgetsKeepTheirOrder) {
  const auto plan = decay_branches("wsd(peak=1e-3, warmup=5%, decay=20%, shape=1-sqrt)", {1000, 400});
  ASSERT_EQ(plan.branches.size(), 2u);
  EXPECT_EQ(plan.branches[0].budget, 1000);
  EXPECT_EQ(plan.branches[1].budget, 400);
  // A 5 % warmup of 2,000,000 steps rises slower than one of 1000 from update 1 on: both branches train from scratch.
  EXPECT_EQ(plan.branches[0].fork, 1);
  EXPECT_EQ(plan.branches[1].fork, 1);
  EXPECT_EQ(plan.steps(), 1 + 999 + 399);
  EXPECT_EQ(plan.forks(), std::vector<int64_t>{1});  // one state saved for both
}

// 1000x the largest budget, but a scheduler checks every rate of its run: at most 1e8 steps, and at least 2x.
TEST(DecayBranches, TheMainRunIsLongButNotLongerThanLrkitChecks) {
  EXPECT_EQ(main_run_length(2000), 2'000'000);
  EXPECT_EQ(main_run_length(100'000), 100'000'000);
  EXPECT_EQ(main_run_length(400'000), 100'000'000);
  EXPECT_EQ(main_run_length(80'000'000), 160'000'000);
  // An LLM-length sweep: the main run's rates pass the check a scheduler runs, and the forks are each decay's start.
  const auto plan = decay_branches("wsd(peak=3e-4, warmup=2000, decay=20%)", {200'000, 400'000});
  EXPECT_EQ(plan.main.total(), 100'000'000);
  EXPECT_NO_THROW(require_usable_rates(plan.main, plan.main.total()));
  EXPECT_EQ(plan.forks(), (std::vector<int64_t>{160'001, 320'001}));
}

TEST(DecayBranches, ForkStepIsNulloptWhenNoRateDiffers) {
  const auto constant = parse_schedule("constant(1e-3)");
  EXPECT_EQ(fork_step(constant, constant, 100), std::nullopt);
  const auto main = parse_schedule(kWsd, 10'000), branch = parse_schedule(kWsd, 100);
  EXPECT_EQ(fork_step(main, branch, 100), 91);
  EXPECT_EQ(fork_step(main, branch, 91), std::nullopt);  // the budget ends before the decay's first change
}

std::string refusal(const std::string& spec, const std::vector<int64_t>& budgets) {
  try {
    decay_branches(spec, budgets);
  } catch (const SpecError& e) {
    return std::string("SpecError: ") + e.what();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(DecayBranches, RefusalsNameTheProblem) {
  EXPECT_EQ(refusal(kWsd, {}), "decay branches need at least one budget");
  EXPECT_EQ(refusal(kWsd, {500, 0}), "budget 0 is not a number of steps in [1, 100000000]");
  EXPECT_EQ(refusal(kWsd, {500, 200'000'000}), "budget 200000000 is not a number of steps in [1, 100000000]");
  EXPECT_EQ(refusal(kWsd, {500, 1000, 500}), "budget 500 is given twice");
  EXPECT_EQ(refusal("wsd(peak=1e-3, warmup=50, decay=10%, total=5000)", {500}),
            "schedule 'wsd(peak=1e-3, warmup=50, decay=10%, total=5000)' has a length of its own (5000 steps); a "
            "branch's length is its budget: remove total=");
  EXPECT_EQ(refusal("constant(1e-3)", {500}),
            "schedule 'constant(1e-3)' never departs from the main run at budget 500 (it does not decay): it needs no "
            "branches");
  EXPECT_EQ(refusal("wsd(peak=1e-3", {500}).rfind("SpecError: ", 0), 0u);
}

}  // namespace
}  // namespace lrkit::schedules
