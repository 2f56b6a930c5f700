// Loss-based reweighting in the trainer: the same weights, hence the same
// run, for any accumulation split; a real change of trajectory; the log.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "lrkit/h5/file.hpp"
#include "lrkit/train/trainer.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

TrainConfig reweighted(const std::string& name) {
  auto c = tiny_config();
  c.train.steps = 12;
  c.out = (lrkit::testing::scratch_dir() / name).string();
  lrkit::testing::remove_tree(c.out);
  c.reweight.strategy = "linupper";
  c.reweight.strength = 0.4;
  c.reweight.warmup = 3;
  c.reweight.histogram_every = 4;
  c.reweight.histogram_bins = 8;
  return c;
}

TEST(ReweightTrainer, AccumulationSplitGivesTheSameRun) {
  auto whole = reweighted("reweight_whole");
  auto split = reweighted("reweight_split");
  split.train.accumulation = 4;
  std::ostringstream progress;
  const auto a = run_training(whole, progress);
  const auto b = run_training(split, progress);
  ASSERT_EQ(a.losses.size(), 12u);
  for (size_t i = 0; i < a.losses.size(); ++i) EXPECT_NEAR(a.losses[i], b.losses[i], 1e-5) << i;
  const auto ea = h5::read_series(a.log_path, "/reweight/entropy");
  const auto eb = h5::read_series(b.log_path, "/reweight/entropy");
  // The weights are a softmax of the losses over the strength: the losses' rounding difference (the 1e-5 above: the
  // micro-batches' GEMMs round otherwise) reaches the entropy divided by it (LibTorch 2.11's CPU kernels: 1.1e-5).
  const double entropy_tolerance = 1e-5 / whole.reweight.strength;
  for (size_t i = 0; i < ea.size(); ++i) EXPECT_NEAR(ea[i], eb[i], entropy_tolerance) << i;
}

TEST(ReweightTrainer, WeightsChangeTheRunAndAreLogged) {
  auto c = reweighted("reweight_log");
  auto uniform = c;
  uniform.out += "_uniform";
  uniform.reweight.strategy = "uniform";
  std::ostringstream progress;
  const auto w = run_training(c, progress);
  const auto u = run_training(uniform, progress);
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(w.losses[i], u.losses[i], 1e-5) << "uniform during the warmup, step " << i;
  EXPECT_GT(std::fabs(w.losses.back() - u.losses.back()), 1e-4) << "the weights change the trajectory";
  const auto entropy = h5::read_series(w.log_path, "/reweight/entropy");
  const auto ratio = h5::read_series(w.log_path, "/reweight/max_min_ratio");
  const auto size = h5::read_series(w.log_path, "/reweight/effective_size");
  ASSERT_EQ(entropy.size(), 12u);
  for (size_t t = 0; t < 12; ++t) {
    EXPECT_LE(entropy[t], std::log(8.0) + 1e-12);
    EXPECT_LE(ratio[t], std::exp(1 / 0.4) * (1 + 1e-9));
    if (t < 3) {
      EXPECT_NEAR(entropy[t], std::log(8.0), 1e-12) << "uniform warmup";
      EXPECT_NEAR(size[t], 8.0, 1e-9);
    }
  }
  EXPECT_GT(ratio.back(), 1.5) << "linupper at r = 0.4 spreads the weights";
  EXPECT_EQ(h5::read_series(w.log_path, "/reweight/histogram_step"), (std::vector<double>{4, 8, 12}));
  const auto histogram = h5::read_matrix(w.log_path, "/reweight/histogram");
  ASSERT_EQ(histogram.columns, 8);
  for (int64_t row = 0; row < histogram.rows; ++row) {
    double count = 0;
    for (int64_t b = 0; b < 8; ++b) count += histogram.at(row, b);
    EXPECT_EQ(count, 8.0) << "every sample once";
  }
}

TEST(ReweightTrainer, BadSettingsNameTheKey) {
  auto c = reweighted("reweight_bad");
  c.reweight.strategy = "cubic";
  expect_config_error(c, "reweight.strategy");
  c = reweighted("reweight_bad");
  c.reweight.strength = 0;
  expect_config_error(c, "reweight.strength");
  c = reweighted("reweight_bad");
  c.hdet.enabled = true;
  expect_config_error(c, "hdet.enabled");
}

}  // namespace
}  // namespace lrkit::train
