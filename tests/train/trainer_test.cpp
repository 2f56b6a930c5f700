// The training loop on a tiny model and a small generated corpus.
#include "lrkit/train/trainer.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "lrkit/h5/file.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "test_files.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

TEST(Trainer, LossFallsAndRunsAreBitIdentical) {
  std::ostringstream log1, log2;
  const auto a = run_training(tiny_config(), log1);
  const auto b = run_training(tiny_config(), log2);
  ASSERT_EQ(a.losses.size(), 30u);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_LT(a.losses.back(), a.losses.front() - 1.0);
  EXPECT_NE(log1.str().find("step     30/30"), std::string::npos) << log1.str();
}

TEST(Trainer, RunLogHoldsEveryStepAndFeedsRefinement) {
  auto c = tiny_config();
  c.eval.every = 10;
  std::ostringstream log;
  const auto summary = run_training(c, log);
  EXPECT_EQ(lrkit::h5::read_series(summary.log_path, "/train/loss"), summary.losses);
  const auto lr = lrkit::h5::read_series(summary.log_path, "/train/lr");
  const auto schedule = lrkit::schedules::parse_schedule(c.schedule, c.train.steps);
  ASSERT_EQ(lr.size(), 30u);
  for (int64_t t = 0; t < 30; ++t) EXPECT_EQ(lr[static_cast<size_t>(t)], schedule(t));
  const auto l2 = lrkit::h5::read_series(summary.log_path, "/train/grad_norm");
  const auto l1 = lrkit::h5::read_series(summary.log_path, "/train/grad_norm_l1");
  for (size_t i = 0; i < l2.size(); ++i) EXPECT_GT(l1[i], l2[i]);  // ||g||_1 >= ||g||_2
  EXPECT_EQ(lrkit::h5::read_series(summary.log_path, "/eval/heldout/step"), (std::vector<double>{10, 20, 30}));
  // A finished run's norms refine the next run's schedule.
  const auto refined = lrkit::schedules::parse_schedule("refined(norms=" + summary.log_path + ", peak=1e-2, norm=l1)", 100);
  double peak = 0.0;
  for (int64_t t = 0; t <= 100; ++t) peak = std::max(peak, refined(t));
  EXPECT_DOUBLE_EQ(peak, 1e-2);
  EXPECT_EQ(refined(100), 0.0);
}

TEST(Trainer, AccumulationSplitGivesTheSameLosses) {
  auto c = tiny_config();
  c.train.steps = 5;
  std::ostringstream log;
  const auto whole = run_training(c, log);
  c.train.accumulation = 4;
  const auto split = run_training(c, log);
  ASSERT_EQ(split.losses.size(), whole.losses.size());
  // The same sequences, summed in another order: equal within float rounding.
  for (size_t i = 0; i < whole.losses.size(); ++i) EXPECT_NEAR(split.losses[i], whole.losses[i], 1e-5) << i;
}

TEST(Trainer, NamedEvalSetsAreEvaluatedAndLoggedSeparately) {
  std::ostringstream log;
  auto c = tiny_config();
  std::string other;
  for (int i = 0; i < 300; ++i) other += "Four score and seven years ago our fathers brought forth " + std::to_string(i) + "\n";
  c.eval.sets = "heldout, speeches=" + lrkit::testing::write_text("speeches.txt", other);
  c.eval.every = 10;
  c.out = (lrkit::testing::scratch_dir() / "eval_sets").string();
  const auto s = run_training(c, log);
  ASSERT_EQ(s.final_eval_losses.size(), 2u);
  EXPECT_EQ(s.final_eval_loss, s.final_eval_losses.at("heldout"));
  // Trained on the Gospel sentence, the model finds the speech much less predictable.
  EXPECT_GT(s.final_eval_losses.at("speeches"), s.final_eval_losses.at("heldout") + 0.2);
  for (const char* set : {"heldout", "speeches"}) {
    EXPECT_EQ(lrkit::h5::read_series(s.log_path, std::string("/eval/") + set + "/step"), (std::vector<double>{10, 20, 30}));
    EXPECT_EQ(lrkit::h5::read_series(s.log_path, std::string("/eval/") + set + "/loss").back(), s.final_eval_losses.at(set));
  }
  EXPECT_NE(log.str().find("speeches loss"), std::string::npos) << log.str();

  c.eval.sets = "heldout, speeches=/nonexistent.txt";
  EXPECT_THROW(run_training(c, log), CorpusError);
  c.eval.sets = "heldout, heldout";
  EXPECT_THROW(run_training(c, log), std::invalid_argument);
}

TEST(Trainer, Bf16AutocastTrainsCloseToFp32) {
  std::ostringstream log;
  auto c = tiny_config();
  c.train.steps = 20;
  const auto fp32 = run_training(c, log);
  c.train.precision = "bf16";  // CPU autocast here; CUDA autocast on GPUs
  const auto bf16 = run_training(c, log);
  ASSERT_EQ(bf16.losses.size(), fp32.losses.size());
  EXPECT_NE(bf16.losses, fp32.losses) << "autocast must change the arithmetic";
  for (size_t i = 0; i < fp32.losses.size(); ++i) EXPECT_NEAR(bf16.losses[i], fp32.losses[i], 0.05 * fp32.losses[i]) << i;
  EXPECT_LT(bf16.losses.back(), bf16.losses.front() - 0.5);
}

// optim.cycle_momentum: beta1 (SGD: momentum) follows the onecycle schedule's cycle, logged as /train/momentum. A
// cycle from 0.9 to 0.9 trains bit for bit as a fixed 0.9 does, so the cycled value is what the optimizer uses.
TEST(Trainer, CycledMomentumIsTheOptimizersMomentumAtEveryStep) {
  std::ostringstream log;
  for (const auto optimizer : {OptimizerName::adamw, OptimizerName::sgd}) {
    SCOPED_TRACE(optimizer == OptimizerName::adamw ? "adamw" : "sgd");
    auto c = tiny_config();
    c.train.steps = 12;
    c.schedule = "onecycle(peak=1e-2)";
    c.optim.name = optimizer;
    c.optim.beta1 = c.optim.momentum = 0.9;
    const auto fixed = run_training(c, log);
    c.optim.cycle_momentum = true;
    c.optim.base_momentum = c.optim.max_momentum = 0.9;
    c.optim.beta1 = c.optim.momentum = 0.5;  // set aside by the cycle
    EXPECT_EQ(run_training(c, log).losses, fixed.losses);
    c.optim.base_momentum = 0.85;
    c.optim.max_momentum = 0.95;
    const auto cycled = run_training(c, log);
    EXPECT_NE(cycled.losses, fixed.losses);
    const auto momentum = lrkit::h5::read_series(cycled.log_path, "/train/momentum");
    const auto schedule = lrkit::schedules::parse_schedule(c.schedule, c.train.steps);
    ASSERT_EQ(momentum.size(), 12u);
    for (int64_t t = 0; t < 12; ++t) EXPECT_EQ(momentum[static_cast<size_t>(t)], schedule.cycled_momentum(t, 0.85, 0.95));
  }
  auto c = tiny_config();
  c.optim.cycle_momentum = true;
  expect_config_error(c, "optim.cycle_momentum = true needs a schedule.spec that cycles the momentum against its rate");
  c.schedule = "triangular(peak=1e-2, up=5)";
  c.optim.base_momentum = 0.96;
  expect_config_error(c, "optim.base_momentum (0.96) must not exceed optim.max_momentum (0.95)");
}

TEST(Trainer, BadInputsNameTheProblem) {
  std::ostringstream log;
  auto c = tiny_config();
  c.data.path = "/nonexistent/corpus.txt";
  EXPECT_THROW(run_training(c, log), CorpusError);
  c = tiny_config();
  c.model.width = 15;
  EXPECT_THROW(run_training(c, log), std::invalid_argument);
  c = tiny_config();
  c.train.batch = 7;
  c.train.accumulation = 2;
  EXPECT_THROW(run_training(c, log), std::invalid_argument);
  c = tiny_config();
  c.schedule = "cosine(peak=-1)";
  EXPECT_THROW(run_training(c, log), std::invalid_argument);
  c = tiny_config();
  c.out = "/proc/no-such-dir/run";
  EXPECT_THROW(run_training(c, log), lrkit::h5::Error);
}

TEST(TrainConfig, FileAndOverridesAndUnknownKeys) {
  const auto cfg = lrkit::testing::write_text("run.cfg", "[train]\nsteps = 7\nbatch = 4\n[schedule]\nspec = constant(1e-3)\n");
  TrainConfig c;
  std::string help;
  ASSERT_TRUE(parse_train_config({"--config", cfg, "--train.batch=2"}, c, help));
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_EQ(c.train.batch, 2);  // the command line wins
  EXPECT_EQ(c.schedule, "constant(1e-3)");
  const auto bad = lrkit::testing::write_text("bad.cfg", "[train]\nstepz = 7\n");
  try {
    parse_train_config({"--config", bad}, c, help);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("train.stepz"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_train_config({"--train.stepz=1"}, c, help), std::invalid_argument);
  EXPECT_THROW(parse_train_config({"--train.steps=abc"}, c, help), std::invalid_argument);
  EXPECT_THROW(parse_train_config({"--config", "/nonexistent.cfg"}, c, help), std::invalid_argument);
  EXPECT_FALSE(parse_train_config({"--help"}, c, help));
  EXPECT_NE(help.find("schedule.spec"), std::string::npos);
}

}  // namespace
}  // namespace lrkit::train
