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

// The sweep file's [train] log_every or [checkpoint] every edited: the same run, carried out otherwise.
TEST(SweepExtension, KeysThatChangeNoResultLeaveTheSameRun) {
  const auto before = main_run(40000, "17,33", 33);
  auto cadences = before;
  cadences.insert(cadences.begin() + 2, {"--train.log_every=5", "--checkpoint.every=10"});
  EXPECT_TRUE(the_same_run(before, cadences));
  EXPECT_EQ(result_free_changes(before, cadences), "checkpoint.every = (unset) -> 10; train.log_every = (unset) -> 5");
  auto edited = cadences;
  edited[2] = "--train.log_every=7";
  edited[3] = "--checkpoint.every=10";
  EXPECT_TRUE(the_same_run(cadences, edited));
  EXPECT_EQ(result_free_changes(cadences, edited), "train.log_every = 5 -> 7");
  EXPECT_EQ(result_free_changes(edited, edited), "");
  edited.insert(edited.begin() + 2, {"--eval.every=3", "--train.threads=2", "--log.flush_every=1"});
  EXPECT_TRUE(the_same_run(before, edited));
  // What changes the updates or the measured results is another run, as is another length.
  for (const char* other : {"--optim.clip=0.5", "--eval.batches=2", "--train.accumulation=2", "--dist.bucket_mb=1",
                            "--train.device=cuda", "--train.precision=bf16", "--train.skip_loss_z=3"}) {
    auto changed = before;
    changed.insert(changed.begin() + 2, other);
    EXPECT_FALSE(the_same_run(before, changed)) << other;
  }
  EXPECT_FALSE(the_same_run(before, main_run(80000, "17,33,65", 65)));
  // With the length: a longer run goes on, a shorter one is held, whatever the cadences.
  auto longer = main_run(80000, "17,33,65", 65);
  longer.insert(longer.begin() + 2, "--checkpoint.every=4");
  EXPECT_TRUE(continues_the_run(before, longer));
  EXPECT_TRUE(holds_the_run(longer, before));
  longer.insert(longer.begin() + 2, "--optim.clip=0.5");
  EXPECT_FALSE(continues_the_run(before, longer));
}

}  // namespace
}  // namespace lrkit::cli
