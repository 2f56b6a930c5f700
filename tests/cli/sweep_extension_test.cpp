// sweep_extension.hpp: which changed arguments continue a sweep run (more budgets), which a longer run holds (fewer
// budgets again) and which start another run.
#include "lrkit/cli/sweep_extension.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lrkit::cli {
namespace {

// A branching WSD main run's arguments as the sweep plans them: forks at `at`, trained to the last.
std::vector<std::string> main_run(int64_t total, const std::string& at, int64_t steps, const std::string& warmup = "5") {
  return {"--config", "base.cfg", "--eval.every=0", "--out=out/runs/wsd_main_p0.003_s1", "--train.steps=" + std::to_string(steps),
          "--train.seed=1", "--schedule.spec=wsd(warmup=" + warmup + ", decay=20%, peak=0.003, total=" + std::to_string(total) + ")",
          "--resume=auto", "--checkpoint.at=" + at};
}

TEST(SweepExtension, AMainRunStretchedToALargerBudgetGoesOn) {
  EXPECT_TRUE(continues_the_run(main_run(40000, "17,33", 33), main_run(80000, "17,33,65", 65)));
  EXPECT_TRUE(continues_the_run(main_run(40000, "17,33", 33), main_run(40000, "17,33", 33)));
}

TEST(SweepExtension, FewerStepsAnotherSettingOrAnotherRateStartAnotherRun) {
  const auto before = main_run(80000, "17,33,65", 65);
  EXPECT_FALSE(continues_the_run(before, main_run(40000, "17,33", 33))) << "fewer steps";
  auto seed = main_run(160000, "17,33,65,129", 129);
  seed[5] = "--train.seed=2";
  EXPECT_FALSE(continues_the_run(before, seed)) << "another seed";
  auto extra = main_run(160000, "17,33,65,129", 129);
  extra.insert(extra.begin() + 2, "--optim.clip=0.5");
  EXPECT_FALSE(continues_the_run(before, extra)) << "another setting";
  EXPECT_FALSE(continues_the_run(before, main_run(160000, "17,33,65,129", 129, "10"))) << "another warmup: other rates";
  // A budget between the earlier ones forks where the main run trained past without a checkpoint to branch from.
  EXPECT_FALSE(continues_the_run(before, main_run(160000, "17,25,33,65,129", 129))) << "a fork inside the trained steps";
  EXPECT_TRUE(continues_the_run(before, main_run(160000, "17,33,65,129", 129)));
}

// Run again with fewer budgets, the stretched main run holds the shorter one: its forks and its last step are
// checkpoints the longer run kept, and its rates are the same.
TEST(SweepExtension, ALongerRunHoldsTheShorterOneItsFewerBudgetsAskFor) {
  const auto longer = main_run(80000, "17,33,65", 65);
  EXPECT_TRUE(holds_the_run(longer, main_run(40000, "17,33", 33)));
  EXPECT_TRUE(holds_the_run(longer, longer));
  EXPECT_FALSE(holds_the_run(main_run(40000, "17,33", 33), longer)) << "more steps";
  EXPECT_FALSE(holds_the_run(longer, main_run(40000, "17,25,33", 33))) << "a fork the longer run kept no checkpoint at";
  EXPECT_FALSE(holds_the_run(longer, main_run(50000, "17,40", 40))) << "its last step was no checkpoint of the longer run";
  EXPECT_FALSE(holds_the_run(longer, main_run(40000, "17,33", 33, "10"))) << "another warmup: other rates";
  auto seed = main_run(40000, "17,33", 33);
  seed[5] = "--train.seed=2";
  EXPECT_FALSE(holds_the_run(longer, seed)) << "another seed";
  auto spec = main_run(40000, "17,33", 33);
  spec[6] = "--schedule.spec=wsd(peak=";
  EXPECT_FALSE(holds_the_run(longer, spec)) << "a spec that does not build";
}

TEST(SweepExtension, ArgumentsItCannotReadContinueNothing) {
  const auto before = main_run(40000, "17,33", 33);
  auto steps = main_run(80000, "17,33,65", 65);
  steps[4] = "--train.steps=65x";
  EXPECT_FALSE(continues_the_run(before, steps));
  auto at = main_run(80000, "17,33,65", 65);
  at.back() = "--checkpoint.at=17,thirty";
  EXPECT_FALSE(continues_the_run(before, at));
  auto spec = main_run(80000, "17,33,65", 65);
  spec[6] = "--schedule.spec=wsd(peak=";
  EXPECT_FALSE(continues_the_run(before, spec)) << "a spec that does not build";
  auto no_spec = main_run(80000, "17,33,65", 65);
  no_spec.erase(no_spec.begin() + 6);
  EXPECT_FALSE(continues_the_run(before, no_spec));
}

}  // namespace
}  // namespace lrkit::cli
