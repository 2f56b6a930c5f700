// The training loop on a tiny model and a small generated corpus.
#include "lrkit/train/trainer.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "lrkit/train/byte_corpus.hpp"
#include "test_files.hpp"

namespace lrkit::train {
namespace {

std::string small_corpus() {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "In the beginning was the word, and the word was " + std::to_string(i % 7) + ".\n";
  return lrkit::testing::write_text("corpus.txt", text);
}

TrainConfig tiny_config() {
  TrainConfig c;
  c.model = {256, 16, 1, 2, 16, 0.0};
  c.data.path = small_corpus();
  c.train.steps = 30;
  c.train.batch = 8;
  c.train.log_every = 10;
  c.train.threads = 1;
  c.eval.every = 0;
  c.eval.batches = 2;
  c.schedule = "cosine(peak=1e-2, warmup=3)";
  return c;
}

TEST(Trainer, LossFallsAndRunsAreBitIdentical) {
  std::ostringstream log1, log2;
  const auto a = run_training(tiny_config(), log1);
  const auto b = run_training(tiny_config(), log2);
  ASSERT_EQ(a.losses.size(), 30u);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_LT(a.losses.back(), a.losses.front() - 1.0);
  EXPECT_NE(log1.str().find("step     30/30"), std::string::npos) << log1.str();
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
