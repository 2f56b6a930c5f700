// HDET inside the reference trainer, in one process with virtual replicas:
// plain-data-parallel equality at alpha = 0, the log, the spread of every
// hyper-parameter, averaging at syncs, and the shared-gradient SGD mean.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "lrkit/h5/file.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/trainer.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

TrainConfig hdet_config(const std::string& name) {
  auto c = tiny_config();
  c.train.steps = 12;
  c.out = (lrkit::testing::scratch_dir() / name).string();
  lrkit::testing::remove_tree(c.out);
  c.hdet.enabled = true;
  c.hdet.controller.sync_every = 4;
  c.hdet.controller.sigma = 0.01;
  return c;
}

std::vector<torch::Tensor> checkpoint_weights(const TrainConfig& c, const std::string& file) {
  Gpt model(c.model);
  load_checkpoint(file, model, nullptr);
  std::vector<torch::Tensor> weights;
  for (const auto& p : model->parameters()) weights.push_back(p.detach().clone());
  return weights;
}

std::string main_checkpoint(const TrainConfig& c, int64_t step) {
  char name[40];
  std::snprintf(name, sizeof name, "step_%010lld.pt", static_cast<long long>(step));
  return (std::filesystem::path(c.out) / "checkpoints" / name).string();
}

TEST(HdetTrainer, AlphaZeroIsPlainTrainingBitForBit) {
  auto plain = hdet_config("hdet_plain");
  plain.hdet.enabled = false;
  plain.model.dropout = 0.1;
  plain.eval.every = 6;
  auto hdet = plain;
  hdet.out += "_alpha0";
  hdet.hdet.enabled = true;
  hdet.hdet.controller.alpha = 0.0;
  std::ostringstream progress;
  const auto a = run_training(plain, progress);
  const auto b = run_training(hdet, progress);
  EXPECT_EQ(a.losses, b.losses);
  EXPECT_EQ(a.final_eval_losses, b.final_eval_losses);
  EXPECT_EQ(h5::read_series(a.log_path, "/train/lr"), h5::read_series(b.log_path, "/train/lr"));
  EXPECT_EQ(h5::read_series(a.log_path, "/eval/heldout/loss"), h5::read_series(b.log_path, "/eval/heldout/loss"));
  EXPECT_EQ(b.final_lr_scale, 1.0);
}

TEST(HdetTrainer, TheLogHoldsTheSpreadTheWindowsAndTheBase) {
  auto c = hdet_config("hdet_log");
  c.hdet.replicas_per_rank = 4;
  c.hdet.controller.alpha = 0.2;
  std::ostringstream progress;
  const auto s = run_training(c, progress);
  EXPECT_NE(progress.str().find("base lr"), std::string::npos) << progress.str();
  EXPECT_NE(progress.str().find("HDET 4 replicas (shared)"), std::string::npos) << progress.str();
  const auto replica_lr = h5::read_matrix(s.log_path, "/hdet/lr/replica");
  const auto replica_loss = h5::read_matrix(s.log_path, "/hdet/replica_loss");
  const auto window = h5::read_matrix(s.log_path, "/hdet/window_loss");
  const auto base = h5::read_series(s.log_path, "/hdet/lr/base");
  const auto scale = h5::read_series(s.log_path, "/hdet/lr/scale");
  const auto lr = h5::read_series(s.log_path, "/train/lr");
  const auto loss = h5::read_series(s.log_path, "/train/loss");
  const auto schedule = schedules::parse_schedule(c.schedule, c.train.steps);
  ASSERT_EQ(replica_lr.rows, 12);
  ASSERT_EQ(replica_lr.columns, 4);
  double running_scale = 1.0;
  for (int64_t t = 0; t < 12; ++t) {
    // The replicas' rates: mean = the base the step used = schedule x the correction before this step.
    std::vector<double> rates;
    double mean_rate = 0.0, mean_loss = 0.0;
    for (int64_t r = 0; r < 4; ++r) {
      rates.push_back(replica_lr.at(t, r));
      mean_rate += replica_lr.at(t, r) / 4;
      mean_loss += replica_loss.at(t, r) / 4;
    }
    EXPECT_NEAR(mean_rate, lr[static_cast<size_t>(t)], 1e-15);
    EXPECT_DOUBLE_EQ(lr[static_cast<size_t>(t)], schedule(t) * running_scale) << t;
    EXPECT_NEAR(mean_loss, loss[static_cast<size_t>(t)], 1e-12);
    std::sort(rates.begin(), rates.end());
    if (t > 0) {  // at step 0 the schedule's warmup starts from 0
      EXPECT_NEAR(rates.front() / lr[static_cast<size_t>(t)], 0.8, 1e-12);
      EXPECT_NEAR(rates.back() / lr[static_cast<size_t>(t)], 1.2, 1e-12);
    }
    // The window mean restarts after each sync.
    const int64_t first = t / 4 * 4;
    for (int64_t r = 0; r < 4; ++r) {
      double sum = 0.0;
      for (int64_t k = first; k <= t; ++k) sum += replica_loss.at(k, r);
      EXPECT_NEAR(window.at(t, r), sum / static_cast<double>(t - first + 1), 1e-12) << t;
    }
    if ((t + 1) % 4 != 0) {
      EXPECT_EQ(scale[static_cast<size_t>(t)], running_scale) << "only syncs move the base";
    }
    running_scale = scale[static_cast<size_t>(t)];
    EXPECT_DOUBLE_EQ(base[static_cast<size_t>(t)], schedule(t) * running_scale);
  }
  EXPECT_NE(running_scale, 1.0) << "sigma = 0.01 makes the meta-update move";
  EXPECT_EQ(s.final_lr_scale, running_scale);
  // A fresh permutation at every sync: the rates' order changes at least once in three syncs.
  bool reordered = false;
  for (int64_t t = 4; t < 12; t += 4)
    for (int64_t r = 0; r < 4; ++r)
      reordered |= (replica_lr.at(t, r) > replica_lr.at(t, 0)) != (replica_lr.at(t - 1, r) > replica_lr.at(t - 1, 0));
  EXPECT_TRUE(reordered);
}

// Checkpoints after every step hold every replica's weights: equal after a
// sync (and at the end), different between syncs, in both fan-out modes.
TEST(HdetTrainer, ReplicasAgreeAfterEachSyncAndDifferBetween) {
  for (const std::string mode : {"shared", "local"}) {
    auto c = hdet_config("hdet_sync_" + mode);
    c.hdet.replicas_per_rank = 3;
    c.hdet.mode = mode;
    c.hdet.controller.alpha = 0.3;
    c.train.batch = 6;
    c.train.steps = 10;
    c.checkpoint.every = 1;
    c.checkpoint.keep = 100;
    std::ostringstream progress;
    run_training(c, progress);
    for (int64_t step = 1; step <= 10; ++step) {
      const auto main = main_checkpoint(c, step);
      const auto w0 = checkpoint_weights(c, main);
      const bool averaged = step % 4 == 0 || step == 10;
      if (step == 1) continue;  // the warmup's first rate is 0 for every replica
      for (int64_t g = 1; g < 3; ++g) {
        const auto wg = checkpoint_weights(c, replica_checkpoint_path(main, g));
        bool equal = true;
        for (size_t i = 0; i < w0.size(); ++i) equal &= torch::equal(w0[i], wg[i]);
        EXPECT_EQ(equal, averaged) << mode << " step " << step << " replica " << g;
      }
    }
  }
}

// SGD without momentum, shared gradient: each replica moves by -eta_r g_bar,
// so between syncs every replica's move / eta_r is the same g_bar, and the
// replicas' mean moves by -base x g_bar at every step, syncs included
// (averaging keeps the mean).
TEST(HdetTrainer, SharedGradientSgdMeanFollowsTheBaseRate) {
  auto c = hdet_config("hdet_sgd");
  c.optim.name = "sgd";
  c.optim.momentum = 0.0;
  c.optim.weight_decay = 0.0;
  c.optim.clip = 0.0;
  c.hdet.replicas_per_rank = 4;
  c.hdet.controller.alpha = 0.25;
  c.train.steps = 9;
  c.schedule = "constant(peak=0.5)";
  c.checkpoint.every = 1;
  c.checkpoint.keep = 100;
  std::ostringstream progress;
  const auto s = run_training(c, progress);
  const auto replica_lr = h5::read_matrix(s.log_path, "/hdet/lr/replica");
  const auto lr = h5::read_series(s.log_path, "/train/lr");
  auto all_weights = [&](int64_t step) {
    std::vector<std::vector<torch::Tensor>> w;
    const auto main = main_checkpoint(c, step);
    w.push_back(checkpoint_weights(c, main));
    for (int64_t g = 1; g < 4; ++g) w.push_back(checkpoint_weights(c, replica_checkpoint_path(main, g)));
    return w;
  };
  auto before = all_weights(1);
  for (int64_t step = 1; step < 9; ++step) {  // the update of optimizer step `step` (0-based)
    const auto after = all_weights(step + 1);
    const bool sync_inside = (step + 1) % 4 == 0 || step + 1 == 9;  // the last step averages too
    for (size_t i = 0; i < before[0].size(); ++i) {
      const auto g_bar = -(after[0][i] - before[0][i]).to(torch::kDouble) / replica_lr.at(step, 0);
      torch::Tensor mean_move = torch::zeros_like(g_bar);
      for (size_t r = 0; r < 4; ++r) {
        const auto move = (after[r][i] - before[r][i]).to(torch::kDouble);
        mean_move += move / 4;
        if (!sync_inside) {
          const auto g_r = -move / replica_lr.at(step, static_cast<int64_t>(r));
          EXPECT_TRUE(torch::allclose(g_r, g_bar, 1e-3, 1e-6)) << "step " << step << " replica " << r << " param " << i
              << " max diff " << (g_r - g_bar).abs().max().item<double>() << " max g " << g_bar.abs().max().item<double>();
        }
      }
      if (sync_inside) continue;  // g_bar is not recoverable from a replica's move across an average
      EXPECT_TRUE(torch::allclose(mean_move, -lr[static_cast<size_t>(step)] * g_bar, 1e-3, 1e-7)) << "step " << step;
    }
    before = after;
  }
}

TEST(HdetTrainer, WeightDecayAndDropoutSpreadWithinBounds) {
  auto c = hdet_config("hdet_knobs");
  c.hdet.replicas_per_rank = 4;
  c.model.dropout = 0.4;
  c.hdet.dropout_alpha = 0.5;
  c.hdet.dropout_max = 0.5;
  c.hdet.weight_decay_alpha = 0.5;
  std::ostringstream progress;
  const auto s = run_training(c, progress);
  const auto dropout = h5::read_matrix(s.log_path, "/hdet/dropout/replica");
  const auto decay = h5::read_matrix(s.log_path, "/hdet/weight_decay/replica");
  const auto lr = h5::read_matrix(s.log_path, "/hdet/lr/replica");
  const auto decay_base = h5::read_series(s.log_path, "/hdet/weight_decay/base");  // after each step's sync
  bool clamped = false;
  for (int64_t t = 0; t < 12; ++t) {
    double decay_mean = 0.0;
    for (int64_t r = 0; r < 4; ++r) {
      EXPECT_GE(dropout.at(t, r), 0.0);
      EXPECT_LE(dropout.at(t, r), 0.5);
      clamped |= dropout.at(t, r) == 0.5;
      decay_mean += decay.at(t, r) / 4;
    }
    EXPECT_NEAR(decay_mean, t == 0 ? c.optim.weight_decay : decay_base[static_cast<size_t>(t - 1)], 1e-12) << t;
  }
  EXPECT_TRUE(clamped) << "0.4 x 1.5 = 0.6 is above dropout_max";
  // Each hyper-parameter has its own permutation: the orders differ somewhere.
  bool differ = false;
  for (int64_t t = 0; t < 12; ++t)
    for (int64_t r = 1; r < 4; ++r)
      differ |= (decay.at(t, r) > decay.at(t, 0)) != (lr.at(t, r) > lr.at(t, 0));
  EXPECT_TRUE(differ);
}

TEST(HdetTrainer, BadHdetSettingsNameTheKey) {
  auto c = hdet_config("hdet_bad");
  c.hdet.mode = "both";
  expect_config_error(c, "hdet.mode");
  c = hdet_config("hdet_bad");
  c.hdet.dropout_alpha = 0.1;  // model.dropout is 0
  expect_config_error(c, "hdet.dropout_alpha");
  c = hdet_config("hdet_bad");
  c.hdet.replicas_per_rank = 3;  // batch 8
  expect_config_error(c, "replicas per worker (3)");
  c = hdet_config("hdet_bad");
  c.hdet.mode = "local";
  c.diagnostics.pairwise = "exact";
  expect_config_error(c, "diagnostics.pairwise=exact");
  c = hdet_config("hdet_bad");
  c.hdet.controller.alpha = 1.0;
  expect_config_error(c, "hdet.alpha");
}

TEST(HdetTrainer, ResumingAPlainCheckpointWithHdetIsAnError) {
  auto c = hdet_config("hdet_resume_mix");
  c.hdet.enabled = false;
  c.train.steps = 4;
  c.checkpoint.every = 2;
  std::ostringstream progress;
  run_training(c, progress);
  std::filesystem::remove(main_checkpoint(c, 4));
  c.hdet.enabled = true;
  c.resume = "auto";
  try {
    run_training(c, progress);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("holds no HDET state"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lrkit::train
