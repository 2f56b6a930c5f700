// `lrkit diagnose` as users run it: on an lrkit run log, on the per-rank log a
// plain PyTorch DDP loop writes (examples/ddp_rank_log.py under torchrun), and on bad input.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include <filesystem>

#include "run_command.hpp"
#include "tiny_run.hpp"
#include "test_files.hpp"

namespace {

using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;

TEST(DiagnoseCommand, AResumedRunsReportListsItsResumesAndWhatTheyChanged) {
  const auto out = lrkit::testing::two_session_tiny_run("diagnose_resumed", "constant(1e-2)", " --log.flush_every 3");
  ASSERT_FALSE(::testing::Test::HasFailure()) << "a session of the run failed";
  const auto r = run_lrkit("diagnose " + out);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\nresumes: \n  step 6: changed train.steps = 6 -> 12; log.flush_every = 10 -> 3\nflagged windows:"),
            std::string::npos) << r.out;
}

TEST(DiagnoseCommand, ReadsThePerRankLogOfAPyTorchDdpLoop) {
#ifndef LRKIT_TORCH_PYTHON
  GTEST_SKIP() << "no Python that imports torch was found at configure time (Debian: python3-torch)";
#else
  const auto log = (lrkit::testing::scratch_dir() / "ddp_ranks.jsonl").string();
  const auto r = run_command("cd " + lrkit::testing::scratch_dir().string() + " && STEPS=120 RANK_LOG=" + log +
                             " " LRKIT_TORCH_PYTHON " -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 2 --master_port " +
                             std::to_string(29400 + getpid() % 100) + " " + LRKIT_SOURCE_DIR + "/examples/ddp_rank_log.py");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(lrkit::testing::count_lines(run_command("cat " + log).out), 240);
  const auto text = run_lrkit("diagnose " + log);
  ASSERT_EQ(text.code, 0) << text.out;
  EXPECT_NE(text.out.find("2 rank(s), 108 steps analysed (first 12 skipped)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("consistency (mean cos_to_mean)"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("verdict: "), std::string::npos) << text.out;
  const auto json = run_lrkit("diagnose " + log + " --json --window 30");
  ASSERT_EQ(json.code, 0) << json.out;
  EXPECT_EQ(json.out.rfind("{\"source\": ", 0), 0u) << json.out;
  EXPECT_NE(json.out.find("\"window\": 30"), std::string::npos) << json.out;
#endif
}

TEST(DiagnoseCommand, PerRankFilesByGlobWithMappedColumnsAndAMissingRow) {
  const auto dir = lrkit::testing::scratch_dir() / "per_rank";
  std::filesystem::create_directories(dir);
  for (int rank = 0; rank < 3; ++rank) {
    std::string text = "global_step,train/loss,grad_norm\n";
    for (int step = 0; step < 60; ++step)
      if (!(rank == 2 && step == 30)) text += std::to_string(step) + "," + std::to_string(2.0 + 0.01 * ((step * 7 + rank * 3) % 5)) + ",1\n";
    std::ofstream((dir / ("rank" + std::to_string(rank) + ".csv")).string()) << text;
  }
  const auto r = run_lrkit("diagnose '" + (dir / "rank*.csv").string() + "' --columns loss=train/loss,step=global_step");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("lrkit diagnose: warning: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("skipped 1 step(s) missing a rank's row: step 30 (no row for rank 2)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("3 rank(s), 54 steps analysed (first 5 skipped)"), std::string::npos) << r.out;
  // A file whose name holds a pattern's characters is that file ("no file matches 'runs/a[1].csv'").
  std::string both = "step,rank,loss,grad_norm\n";
  for (int step = 0; step < 20; ++step)
    for (int rank = 0; rank < 2; ++rank) both += std::to_string(step) + "," + std::to_string(rank) + ",2,1\n";
  std::ofstream((dir / "ranks[a].csv").string()) << both;
  const auto literal = run_lrkit("diagnose '" + (dir / "ranks[a].csv").string() + "'");
  ASSERT_EQ(literal.code, 0) << literal.out;
  EXPECT_NE(literal.out.find("2 rank(s), 18 steps analysed"), std::string::npos) << literal.out;
}

// The loss of each rank alone (Lightning's self.log(..., sync_dist=False) and many loops log no gradient norm): the
// report of the loss, with a warning and a note saying what was not analysed.
TEST(DiagnoseCommand, DiagnosesTheLossAloneAndSaysSo) {
  const auto dir = lrkit::testing::scratch_dir() / "loss_only";
  std::filesystem::create_directories(dir);
  for (int rank = 0; rank < 2; ++rank) {
    std::string text = "step,loss\n";
    for (int step = 0; step < 60; ++step)
      text += std::to_string(step) + "," + std::to_string(2.0 + 0.01 * ((step * 7 + rank * 3) % 5)) + "\n";
    std::ofstream((dir / ("rank" + std::to_string(rank) + ".csv")).string()) << text;
  }
  const auto r = run_lrkit("diagnose '" + (dir / "rank*.csv").string() + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("lrkit diagnose: warning: " + (dir / "rank0.csv").string() + " (CSV) and 1 more file(s), "
                       "one per rank: no gradient norms ('grad_norm', or 'grad_norm_0', ... with a field per rank): "
                       "the loss alone is diagnosed; map another name with --columns grad_norm=NAME\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: no gradient norms logged: the loss alone is analysed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  loss_cv: "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("grad_norm_std"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nverdict: "), std::string::npos) << r.out;
}

TEST(DiagnoseCommand, ReadsTheWandbRunsOfEveryRank) {
  // The committed runs of a 4-rank DDP loop (tests/golden/make_wandb.py), rank 2's data bad from step 25 on.
  const std::string project = std::string(LRKIT_GOLDEN_DIR) + "/wandb/ddp";
  const auto r = run_lrkit("diagnose " + project + " --window 10");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("lrkit diagnose: " + project + "/wandb/run-20261130_120000-lrkdp003/run-lrkdp003.wandb (W&B "
                        "run log) and 3 more run(s), one per rank\n4 rank(s), 36 steps analysed", 0),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("verdict: silent inconsistency: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the first from step 25 (loss_std)"), std::string::npos) << r.out;
  const auto lone = run_lrkit("diagnose " + project + "/wandb/run-20261130_120001-lrkdp002");
  EXPECT_EQ(lone.code, 2) << lone.out;
  EXPECT_NE(lone.out.find("no field 'rank': the run of rank 2 (its config's 'rank') alone; give every rank's run"),
            std::string::npos)
      << lone.out;
}

TEST(DiagnoseCommand, ReadsTheTensorBoardRunsOfEveryRankAsItsWandbRuns) {
  // The same 4-rank loop logged to TensorBoard (tests/golden/make_tfevents.py): a writer per rank, and rank 0's
  // add_scalars of every rank's values; the report is the W&B runs' report, its source line aside.
  const std::string golden = std::string(LRKIT_GOLDEN_DIR);
  const auto wandb = run_lrkit("diagnose " + golden + "/wandb/ddp --window 10 --json");
  ASSERT_EQ(wandb.code, 0) << wandb.out;
  for (const char* layout : {"ddp", "ddp_gathered"}) {
    const std::string runs = golden + "/tfevents/" + layout;
    const auto r = run_lrkit("diagnose " + runs + " --window 10");
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(" (TensorBoard run)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("4 rank(s), 36 steps analysed"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("verdict: silent inconsistency: "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the first from step 25 (loss_std)"), std::string::npos) << r.out;
    const auto json = run_lrkit("diagnose " + runs + " --window 10 --json");
    ASSERT_EQ(json.code, 0) << json.out;
    const auto verdict = [](const std::string& out) { return out.substr(out.find("\"verdict\"")); };
    EXPECT_EQ(verdict(json.out), verdict(wandb.out)) << layout;
  }
  const auto lone = run_lrkit("diagnose " + golden + "/tfevents/ddp/rank_2");
  EXPECT_EQ(lone.code, 2) << lone.out;
  EXPECT_NE(lone.out.find("one TensorBoard run, whose tag 'loss' is one rank's: give every rank's run"),
            std::string::npos)
      << lone.out;
}

TEST(DiagnoseCommand, BadInputExitsTwoWithOneLine) {
  const auto few = lrkit::testing::write_text("few.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,1,1,1\n");
  const auto bad = lrkit::testing::write_text("bad.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,0,1,1\n");
  for (const std::string& args : std::vector<std::string>{"diagnose", "diagnose /nonexistent.h5", "diagnose " + few + " --skip 1",
                                 "diagnose " + bad, "diagnose '/nonexistent/rank*.csv'", "diagnose " + few + " --columns loss",
                                 "diagnose " + few + " --window=x", "diagnose " + few + " --frobnicate"}) {
    const auto r = run_lrkit(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << args << "\n" << r.out;
  }
  EXPECT_EQ(run_lrkit("diagnose " + few + " --windw 5").out,
            "lrkit diagnose: unrecognised option '--windw'; did you mean --window? (see lrkit diagnose --help)\n");
}

}  // namespace
