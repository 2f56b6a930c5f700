// `lrkit train` with HDET over real Gloo workers: plain data parallel at
// alpha = 0, virtual replicas equal to real ranks, and exact resume.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "device_param.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace {

using lrkit::testing::out_dir;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;

const std::string kHdet = " --hdet.enabled=true --hdet.sync_every=4 --hdet.sigma=0.01";

class TrainHdetOnDevice : public lrkit::testing::OnDevice {};

TEST_P(TrainHdetOnDevice, AlphaZeroOverTwoWorkersIsPlainDataParallelBitForBit) {
  const auto plain = out_dir(named("hdet_cli_plain")), hdet = out_dir(named("hdet_cli_alpha0"));
  const std::string common = "train --config " + tiny_config() + train_args() + " --nproc 2 --model.dropout=0.2";
  auto r = run_lrkit(common + " --out " + plain);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_lrkit(common + kHdet + " --hdet.alpha=0 --out " + hdet);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* series : {"/train/loss", "/train/lr", "/train/grad_norm"})
    EXPECT_EQ(lrkit::h5::read_series(plain + "/log.h5", series), lrkit::h5::read_series(hdet + "/log.h5", series)) << series;
  EXPECT_EQ(lrkit::h5::read_matrix(plain + "/log.h5", "/ranks/loss").values,
            lrkit::h5::read_matrix(hdet + "/log.h5", "/ranks/loss").values);
}

// The same 4 replicas as 2 workers x 2 and as 1 worker x 4: the same data
// rows, dropout masks, rates and averages, so the same trajectory up to the
// order of float sums.
TEST_P(TrainHdetOnDevice, VirtualReplicasFollowTheSameTrajectoryAsRealRanks) {
  for (const std::string mode : {"shared", "local"}) {
    const auto real = out_dir(named("hdet_cli_real_" + mode)), virt = out_dir(named("hdet_cli_virtual_" + mode));
    const std::string common = "train --config " + tiny_config() + train_args() + " --model.dropout=0.1" + kHdet +
                               " --hdet.alpha=0.2 --hdet.mode=" + mode;
    auto r = run_lrkit(common + " --nproc 2 --hdet.replicas_per_rank=2 --out " + real);
    ASSERT_EQ(r.code, 0) << r.out;
    r = run_lrkit(common + " --hdet.replicas_per_rank=4 --out " + virt);
    ASSERT_EQ(r.code, 0) << r.out;
    const auto a = lrkit::h5::read_matrix(real + "/log.h5", "/hdet/replica_loss");
    const auto b = lrkit::h5::read_matrix(virt + "/log.h5", "/hdet/replica_loss");
    const auto lr_a = lrkit::h5::read_matrix(real + "/log.h5", "/hdet/lr/replica");
    const auto lr_b = lrkit::h5::read_matrix(virt + "/log.h5", "/hdet/lr/replica");
    ASSERT_EQ(a.rows, 12);
    ASSERT_EQ(a.columns, 4);
    ASSERT_EQ(b.values.size(), a.values.size());
    for (size_t i = 0; i < a.values.size(); ++i) {
      EXPECT_NEAR(a.values[i], b.values[i], 1e-5 * std::fabs(a.values[i])) << mode << " entry " << i;
      EXPECT_NEAR(lr_a.values[i], lr_b.values[i], 1e-6 * lr_a.values[i] + 1e-15) << mode << " entry " << i;
    }
    EXPECT_NE(a.at(5, 0), a.at(5, 1)) << "replicas see different rows";
  }
}

TEST_P(TrainHdetOnDevice, ResumeContinuesTheSameTrajectoryBitForBit) {
  const auto dir = out_dir(named("hdet_cli_resume"));
  const std::string args = "train --config " + tiny_config() + train_args() + " --nproc 2 --model.dropout=0.2" + kHdet +
                           " --hdet.alpha=0.2 --hdet.replicas_per_rank=2 --checkpoint.every=6 --out " + dir;
  auto r = run_lrkit(args);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string log = dir + "/log.h5";
  const auto loss = lrkit::h5::read_series(log, "/train/loss");
  const auto rates = lrkit::h5::read_matrix(log, "/hdet/lr/replica");
  const auto windows = lrkit::h5::read_matrix(log, "/hdet/window_loss");
  const auto scale = lrkit::h5::read_series(log, "/hdet/lr/scale");
  ASSERT_EQ(loss.size(), 12u);
  EXPECT_NE(scale.back(), 1.0);
  for (const auto& entry : std::filesystem::directory_iterator(dir + "/checkpoints"))
    if (entry.path().filename().string().rfind("step_0000000012", 0) == 0) std::filesystem::remove(entry.path());
  EXPECT_TRUE(std::filesystem::exists(dir + "/checkpoints/step_0000000006.replica_3.pt"));
  r = run_lrkit(args + " --resume auto");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("at step 6"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(log, "/train/loss"), loss);
  EXPECT_EQ(lrkit::h5::read_matrix(log, "/hdet/lr/replica").values, rates.values);
  EXPECT_EQ(lrkit::h5::read_matrix(log, "/hdet/window_loss").values, windows.values);
  EXPECT_EQ(lrkit::h5::read_series(log, "/hdet/lr/scale"), scale);
}

LRKIT_ON_DEVICES(TrainHdetOnDevice);

TEST(TrainHdet, AMissingReplicaFileIsNamed) {
  const auto dir = out_dir("hdet_cli_missing");
  const std::string args = "train --config " + tiny_config() + kHdet +
                           " --hdet.replicas_per_rank=2 --checkpoint.every=6 --out " + dir;
  auto r = run_lrkit(args);
  ASSERT_EQ(r.code, 0) << r.out;
  std::filesystem::remove(dir + "/checkpoints/step_0000000012.pt");
  std::filesystem::remove(dir + "/checkpoints/step_0000000006.replica_1.pt");
  r = run_lrkit(args + " --resume auto");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("step_0000000006.replica_1.pt' does not exist"), std::string::npos) << r.out;
}

// The spread sends some of HDET's replicas over first: at the step that ends the run, the message names the replicas
// whose losses were non-finite and their rates (the mean loss alone said only "nan"), as the log's last
// /hdet/replica_loss and /hdet/lr/replica rows have them. (At this rate replica 2 alone goes, on this machine.)
TEST(TrainHdet, TheReplicasThatDivergedAreNamedWithTheirRates) {
  const auto dir = out_dir("hdet_cli_diverged");
  const auto r = run_lrkit("train --config " + tiny_config() + " --hdet.enabled=true --hdet.replicas_per_rank=4 "
                           "--hdet.alpha=0.9 --optim.name=sgd --optim.clip=0 --schedule.spec='constant(15)' --out " + dir);
  ASSERT_EQ(r.code, 3) << r.out;
  const auto losses = lrkit::h5::read_matrix(dir + "/log.h5", "/hdet/replica_loss");
  const auto rates = lrkit::h5::read_matrix(dir + "/log.h5", "/hdet/lr/replica");
  ASSERT_EQ(losses.columns, 4);
  ASSERT_EQ(rates.rows, losses.rows);
  std::string which, at;
  for (int64_t k = 0; k < 4; ++k) {
    if (std::isfinite(losses.at(losses.rows - 1, k))) continue;
    which += (which.empty() ? "" : ", ") + std::to_string(k);
    at += (at.empty() ? "" : ", ") + lrkit::format_number(rates.at(rates.rows - 1, k));
  }
  ASSERT_FALSE(which.empty()) << r.out;
  const std::string expected =
      which == "0, 1, 2, 3" ? "; every HDET replica's loss was non-finite; last good checkpoint"
                            : "; HDET replica(s) " + which + " of 4 had non-finite losses, at learning rate(s) " + at +
                                  " against the base 15: a spread that wide diverges there (lower hdet.alpha or the peak); "
                                  "last good checkpoint";
  EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

}  // namespace
