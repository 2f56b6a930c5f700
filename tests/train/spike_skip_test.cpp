// The trainer's skip-step policy for spikes (train.skip_loss_z, train.skip_grad_z; ALGORITHMS.md section 9): the
// logged z-scores against the rule worked out here from the logged series, the skipped updates against the weights
// in the checkpoints around them, and a resume that skips what the uninterrupted run skipped.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "lrkit/h5/file.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/run_files.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

namespace fs = std::filesystem;

// z of x against the last `window` values that entered, and whether x enters: not a spike, or the third spike in a
// row or later (llm.c's rule).
struct BruteDetector {
  double threshold;
  size_t window;
  std::vector<double> entered;
  int in_a_row = 0;

  std::pair<double, bool> score(double x) {
    if (entered.size() < window) {
      entered.push_back(x);
      return {NAN, false};
    }
    double mean = 0, squares = 0;
    for (size_t i = entered.size() - window; i < entered.size(); ++i) mean += entered[i] / static_cast<double>(window);
    for (size_t i = entered.size() - window; i < entered.size(); ++i)
      squares += (entered[i] - mean) * (entered[i] - mean) / static_cast<double>(window);
    const double z = (x - mean) / std::sqrt(squares);
    const bool spike = threshold > 0 && z > threshold;
    in_a_row = spike ? in_a_row + 1 : 0;
    if (!spike || in_a_row >= 3) entered.push_back(x);
    return {z, spike};
  }
};

std::vector<torch::Tensor> weights_at(const TrainConfig& c, int64_t step) {
  Gpt model(c.model);
  load_checkpoint(checkpoint_path(c.out, step), model, nullptr);
  std::vector<torch::Tensor> out;
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  return out;
}

bool same_weights(const std::vector<torch::Tensor>& a, const std::vector<torch::Tensor>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (!torch::equal(a[i], b[i])) return false;
  return true;
}

TrainConfig spiky_config(const std::string& name) {
  TrainConfig c = tiny_config();
  c.out = (lrkit::testing::scratch_dir() / name).string();
  lrkit::testing::remove_tree(c.out);
  c.train.steps = 60;
  c.train.spike_window = 8;
  c.train.skip_loss_z = 1.5;  // low: the tiny run's ordinary wiggles pass it now and then
  c.train.skip_grad_z = 1.0;
  return c;
}

TEST(SpikeSkip, SkippedUpdatesAreTheLoggedSpikesAndLeaveTheWeightsAsTheyWere) {
  TrainConfig c = spiky_config("spike_skip");
  c.checkpoint.every = 1;
  c.checkpoint.keep = 60;  // every step's weights
  std::ostringstream progress;
  run_training(c, progress);
  const auto log = run_log_path(c.out);
  const auto loss = h5::read_series(log, "/train/loss");
  const auto grad_norm = h5::read_series(log, "/train/grad_norm");
  const auto loss_z = h5::read_series(log, "/train/loss_z");
  const auto grad_norm_z = h5::read_series(log, "/train/grad_norm_z");
  const auto skipped = h5::read_series(log, "/train/skipped");
  ASSERT_EQ(skipped.size(), 60u);
  BruteDetector losses{1.5, 8, {}, 0}, norms{1.0, 8, {}, 0};
  int loss_spikes = 0, grad_spikes = 0;
  for (size_t t = 0; t < 60; ++t) {
    const auto [lz, loss_spike] = losses.score(loss[t]);
    const auto [gz, grad_spike] = norms.score(grad_norm[t]);
    if (t < 8) {
      EXPECT_TRUE(std::isnan(loss_z[t]) && std::isnan(grad_norm_z[t])) << t;
    } else {
      EXPECT_NEAR(loss_z[t], lz, 1e-9 * std::fabs(lz) + 1e-12) << t;
      EXPECT_NEAR(grad_norm_z[t], gz, 1e-9 * std::fabs(gz) + 1e-12) << t;
    }
    EXPECT_EQ(skipped[t], loss_spike ? 2.0 : grad_spike ? 3.0 : 0.0) << t;
    loss_spikes += skipped[t] == 2.0;
    grad_spikes += skipped[t] == 3.0;
    // The checkpoint at step t + 1 holds the weights after update t: a skipped update leaves them as they were.
    if (t >= 1) {
      const auto step = static_cast<int64_t>(t);
      EXPECT_EQ(same_weights(weights_at(c, step), weights_at(c, step + 1)), skipped[t] != 0) << t;
    }
  }
  EXPECT_GT(loss_spikes + grad_spikes, 2) << "the thresholds are low enough to skip some updates";
  EXPECT_NE(progress.str().find(" spike (z "), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find(" over the last 8 updates), update skipped"), std::string::npos) << progress.str();
}

TEST(SpikeSkip, AResumeSkipsTheUpdatesTheUninterruptedRunSkipped) {
  TrainConfig c = spiky_config("spike_resume");
  c.checkpoint.every = 30;
  std::ostringstream progress;
  run_training(c, progress);
  const auto log = run_log_path(c.out);
  const auto loss = h5::read_series(log, "/train/loss");
  const auto loss_z = h5::read_series(log, "/train/loss_z");
  const auto skipped = h5::read_series(log, "/train/skipped");
  double skipped_after = 0;
  for (size_t t = 30; t < 38; ++t) skipped_after += skipped[t] != 0 || !std::isnan(loss_z[t]);
  ASSERT_GT(skipped_after, 0) << "the window is full at step 30, so a restarted detector would log NaN there";
  fs::remove(checkpoint_path(c.out, 60));
  TrainConfig resumed = c;
  resumed.resume = "auto";
  run_training(resumed, progress);
  EXPECT_EQ(h5::read_series(log, "/train/skipped"), skipped);
  const auto resumed_z = h5::read_series(log, "/train/loss_z");
  ASSERT_EQ(resumed_z.size(), loss_z.size());
  for (size_t t = 0; t < loss_z.size(); ++t)
    EXPECT_TRUE(resumed_z[t] == loss_z[t] || (std::isnan(resumed_z[t]) && std::isnan(loss_z[t]))) << t;
  EXPECT_EQ(h5::read_series(log, "/train/loss"), loss);
  EXPECT_EQ(read_checkpoint_info(checkpoint_path(c.out, 30)).loop.loss_spikes.window.size(), 8u);
}

// Off (the default), nothing is skipped, but the z-scores are logged: a log shows its spikes either way.
TEST(SpikeSkip, OffByDefaultYetTheZScoresAreLogged) {
  TrainConfig c = tiny_config();
  c.out = (lrkit::testing::scratch_dir() / "spike_off").string();
  lrkit::testing::remove_tree(c.out);
  c.train.spike_window = 8;
  std::ostringstream progress;
  run_training(c, progress);
  const auto log = run_log_path(c.out);
  for (double s : h5::read_series(log, "/train/skipped")) EXPECT_EQ(s, 0.0);
  const auto z = h5::read_series(log, "/train/grad_norm_z");
  ASSERT_EQ(z.size(), 30u);
  EXPECT_TRUE(std::isnan(z[7]));
  EXPECT_TRUE(std::isfinite(z[8]));
}

}  // namespace
}  // namespace lrkit::train
