// `lrkit sweep`: a tiny sweep in every mode, its summary against the run logs,
// WSD branches against separate WSD runs, WSD-S checkpoint placement, and
// resumption (finished runs skipped, unfinished ones continued, changed
// settings refused, or restarted where nothing was trained).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "openblas.hpp"
#include "process_cpus.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace {

namespace fs = std::filesystem;
using lrkit::testing::out_dir;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;

std::string sweep_file(const std::string& name, const std::string& out, const std::string& cosine_spec = "cosine(warmup=2)",
                       const std::string& budgets = "8, 12, 16") {
  return lrkit::testing::write_text(name, "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                              "\nbudgets = " + budgets + "\npeaks = 1e-2\njobs = 2\n"
                                              "[schedules]\ncos = " + cosine_spec + "\n"
                                              "wsd = branching: wsd(warmup=2, decay=25%, shape=linear)\n"
                                              "wsds = single: wsds(budgets={budgets}, warmup=2, decay=25%, shape=linear)\n"
                                              "[train]\nlog_every = 100\n");
}

double eval_at(const std::string& log, double step) {
  const auto steps = lrkit::h5::read_series(log, "/eval/heldout/step");
  const auto losses = lrkit::h5::read_series(log, "/eval/heldout/loss");
  for (size_t i = 0; i < steps.size(); ++i)
    if (steps[i] == step) return losses[i];
  return std::nan("");
}

int count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(SweepCommand, EveryModeSummarizedResumedAndCheckedAgainstSeparateRuns) {
  const auto out = out_dir("sweep_modes");
  const auto config = sweep_file("sweep_modes.cfg", out);
  auto r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("| budget | cos | wsd | wsds | best |"), std::string::npos) << r.out;
  const auto summary = out + "/summary.h5";
  const auto loss = lrkit::h5::read_series(summary, "/results/loss");
  const auto step = lrkit::h5::read_series(summary, "/results/step");
  EXPECT_EQ(lrkit::h5::read_series(summary, "/results/schedule"), (std::vector<double>{0, 0, 0, 1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(lrkit::h5::read_series(summary, "/results/budget"), (std::vector<double>{8, 12, 16, 8, 12, 16, 8, 12, 16}));
  ASSERT_EQ(loss.size(), 9u);
  const std::vector<std::string> runs = {"cos_B8", "cos_B12", "cos_B16", "wsd_B8", "wsd_B12", "wsd_B16", "wsds", "wsds", "wsds"};
  for (size_t i = 0; i < loss.size(); ++i) {
    const auto log = out + "/runs/" + runs[i] + "_p0.01_s1234/log.h5";
    EXPECT_EQ(loss[i], eval_at(log, step[i])) << runs[i];
    EXPECT_TRUE(std::isfinite(loss[i])) << runs[i];
  }
  // Two runs at a time share the cores: each run's workers divide its half (LRKIT_CORES), OpenBLAS's threads too.
  const int half = std::max(1, lrkit::testing::process_cpus() / 2);
  EXPECT_NE(r.out.find("2 at a time (" + std::to_string(half) + " core(s) each)"), std::string::npos) << r.out;
  const std::string run_output = lrkit::read_text(out + "/runs/cos_B8_p0.01_s1234/train.txt");
  EXPECT_NE(run_output.find("threads per worker: " + lrkit::testing::worker_threads_text(1, half) + "\n"), std::string::npos)
      << run_output;
  // WSD-S (ALGORITHMS.md section 2): decays 2, 3, 4 -> checkpoints at 8, 12 + 2 = 14, 16 + 2 + 3 = 21.
  EXPECT_EQ(std::vector<double>(step.begin() + 6, step.end()), (std::vector<double>{8, 14, 21}));
  for (const char* file : {"step_0000000008.pt", "step_0000000014.pt", "step_0000000021.pt"})
    EXPECT_TRUE(fs::exists(out + "/runs/wsds_p0.01_s1234/checkpoints/" + file)) << file;
  // Compute against 36 steps of separate runs: WSD-S trains B_3 + D_1 + D_2 = 21; the branches fork one step
  // after B_i - D_i (a linear decay's first step is still the peak): main to 13, then 1 + 2 + 3 steps of decay.
  EXPECT_EQ(lrkit::h5::read_series(summary, "/schedules/planned_steps"), (std::vector<double>{36, 19, 21}));
  EXPECT_EQ(lrkit::h5::read_series(summary, "/schedules/trained_steps"), (std::vector<double>{36, 19, 21}));  // as planned
  EXPECT_NE(r.out.find("| wsd | branching | 19 | 19 | 36 | 0.528 |"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(summary, "/schedules/separate_steps"), (std::vector<double>{36, 36, 36}));

  // A branch equals a separate run of the same WSD schedule, bit for bit.
  const auto separate = out_dir("sweep_separate_wsd");
  r = run_lrkit("train --config " + tiny_config() + " --train.steps=12 --schedule.spec=\"wsd(warmup=2, decay=25%, shape=linear, peak=0.01)\" --out " + separate);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(eval_at(separate + "/log.h5", 12), loss[4]);

  // Run again: nothing is trained.
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: 8 runs, 8 finished before"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(summary, "/results/loss"), loss);

  // A run interrupted mid-way (no marker, only an early checkpoint) continues from it and ends where it would have.
  const auto cut = out + "/runs/cos_B16_p0.01_s1234";
  fs::remove(cut + "/sweep_done");
  fs::remove(cut + "/checkpoints/step_0000000016.pt");
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 1) << r.out;
  EXPECT_NE(r.out.find("sweep: started cos_B16_p0.01_s1234"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(summary, "/results/loss"), loss);

  // Changed settings in a directory with checkpoints are refused before anything moves or starts.
  r = run_lrkit("sweep --config " + sweep_file("sweep_changed.cfg", out, "cosine(warmup=3)"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cos_B8_p0.01_s1234' was started with other settings (see its sweep_args.txt) and holds checkpoints"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("moved aside"), std::string::npos) << r.out;
}

// A sweep run again with a larger budget goes on from the runs it trained: the branching main run and the single
// WSD-S run continue from their checkpoints (their new settings give every step they trained the same rate), the
// earlier budgets' other runs are skipped, and the results are those of the whole sweep run at once, bit for bit.
// They were refused ("started with other settings"): the largest run trained again from step 0.
TEST(SweepCommand, MoreBudgetsGoOnFromTheRunsTrainedAndEqualTheWholeSweep) {
  const auto out = out_dir("sweep_extended"), whole = out_dir("sweep_whole");
  const auto first = sweep_file("sweep_extended_first.cfg", out, "cosine(warmup=2)", "8, 12");
  auto r = run_lrkit("sweep --config " + first);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto first_summary = lrkit::testing::scratch_dir() / "sweep_extended_first_summary.h5";
  std::filesystem::copy_file(out + "/summary.h5", first_summary, std::filesystem::copy_options::overwrite_existing);
  r = run_lrkit("sweep --config " + sweep_file("sweep_extended.cfg", out));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_main_p0.01_s1234 goes on from its checkpoints to step 13 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: wsds_p0.01_s1234 goes on from its checkpoints to step 21 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: 8 runs, 4 finished before"), std::string::npos) << r.out;  // cos and wsd at 8 and 12
  // Each says what it has left to train.
  EXPECT_NE(r.out.find("sweep: started wsd_main_p0.01_s1234 (3 steps, from its checkpoint at step 10)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: started wsds_p0.01_s1234 (7 steps, from its checkpoint at step 14)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: started cos_B16_p0.01_s1234 (16 steps)"), std::string::npos) << r.out;
  for (const char* run : {"wsd_main", "wsds"}) {
    const auto trained = lrkit::read_text(out + "/runs/" + run + "_p0.01_s1234/train.txt");
    EXPECT_NE(trained.find("resumed from " + out + "/runs/" + run + "_p0.01_s1234/checkpoints/step_"), std::string::npos)
        << trained;
  }
  r = run_lrkit("sweep --config " + sweep_file("sweep_whole.cfg", whole));
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* series : {"/results/loss", "/results/step", "/schedules/trained_steps"})
    EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", series), lrkit::h5::read_series(whole + "/summary.h5", series))
        << series;
  for (const char* run : {"wsd_main", "wsds"}) {
    const std::string log = std::string("/runs/") + run + "_p0.01_s1234/log.h5";
    EXPECT_EQ(lrkit::h5::read_series(out + log, "/train/loss"), lrkit::h5::read_series(whole + log, "/train/loss")) << run;
    EXPECT_EQ(lrkit::h5::read_string_attributes(out + log, "/config").at("schedule.spec"),
              lrkit::h5::read_string_attributes(whole + log, "/config").at("schedule.spec")) << "the plan it goes on with";
  }
  // Fewer budgets again: the longer runs hold the shorter ones, so nothing trains and the results (and the steps
  // counted as trained) are those the first sweep gave. They were refused, as started with other settings.
  r = run_lrkit("sweep --config " + first);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_main_p0.01_s1234 holds a longer run (see its sweep_args.txt) whose first 10 steps are "
                       "this run's: nothing to train"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: 6 runs, 6 finished before"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  for (const char* series : {"/results/loss", "/results/step", "/schedules/trained_steps"})
    EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", series), lrkit::h5::read_series(first_summary.string(), series))
        << series;
  // A budget between the trained ones forks where the main run trained past without a checkpoint: refused, and
  // nothing moves or starts.
  r = run_lrkit("sweep --config " + sweep_file("sweep_extended_inside.cfg", out, "cosine(warmup=2)", "8, 10, 12, 16"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("wsd_main_p0.01_s1234' was started with other settings"), std::string::npos) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  // The larger sweep stopped before the longer runs reached the shorter ones' last steps (their later checkpoints
  // gone, as an interrupt leaves them), then run with fewer budgets: each longer run goes on as the shorter one,
  // from its newest checkpoint, and the results are the first sweep's all the same. They were refused.
  for (const auto& [run, shorter] : {std::pair<std::string, int64_t>{"wsd_main", 10}, {"wsds", 14}}) {
    const std::string dir = out + "/runs/" + run + "_p0.01_s1234";
    fs::remove(dir + "/sweep_done");
    for (const auto& file : fs::directory_iterator(dir + "/checkpoints"))
      if (lrkit::train::checkpoint_step_of(file.path().filename().string()).value_or(0) >= shorter) fs::remove(file.path());
  }
  r = run_lrkit("sweep --config " + first);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_main_p0.01_s1234 holds a longer run (see its sweep_args.txt) stopped before step 10, "
                       "whose first 10 steps are this run's: it goes on from its checkpoints as this run"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: started wsd_main_p0.01_s1234 (3 steps, from its checkpoint at step 7)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("sweep: started wsds_p0.01_s1234 (6 steps, from its checkpoint at step 8)"), std::string::npos)
      << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 2) << r.out;
  for (const char* series : {"/results/loss", "/results/step", "/schedules/trained_steps"})
    EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", series), lrkit::h5::read_series(first_summary.string(), series))
        << series;
}

TEST(SweepCommand, ADivergedRunIsAnInfiniteResultNotAFailure) {
  const auto out = out_dir("sweep_diverged");
  const auto config = lrkit::testing::write_text(
      "sweep_diverged.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out + "\nbudgets = 8, 12\npeaks = 1e-2, 1e4\njobs = 2\n"
                            "[schedules]\ncos = cosine(warmup=2)\nwsd = branching: wsd(warmup=2, decay=25%)\n"
                            "wsds = single: wsds(budgets={budgets}, warmup=2, decay=25%)\nboom = scale(constant({peak}), by=1e6)\n");
  auto r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_B8_p10000_s1234 diverged: wsd_main_p10000_s1234 diverged before its fork at step "), std::string::npos)
      << r.out;
  EXPECT_EQ(lrkit::read_text(out + "/runs/cos_B8_p10000_s1234/sweep_done"), "diverged\n");
  // Peak 1e4 diverges everywhere, and so does boom at either peak: +inf, which never wins a column or the best.
  const auto schedule = lrkit::h5::read_series(out + "/summary.h5", "/results/schedule");
  const auto peak = lrkit::h5::read_series(out + "/summary.h5", "/results/peak");
  const auto loss = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  ASSERT_EQ(loss.size(), 16u);
  for (size_t i = 0; i < loss.size(); ++i) {
    if (peak[i] == 1e4 || schedule[i] == 3)
      EXPECT_EQ(loss[i], std::numeric_limits<double>::infinity()) << i;
    else
      EXPECT_TRUE(std::isfinite(loss[i])) << i;
  }
  for (const char* budget : {"| 8 | ", "| 12 | "}) {
    const auto row = r.out.substr(r.out.find(budget), r.out.find('\n', r.out.find(budget)) - r.out.find(budget));
    EXPECT_EQ(count(row, "(0.01) |"), 3) << row;
    EXPECT_NE(row.find("| diverged | "), std::string::npos) << row;
    EXPECT_EQ(row.find("| boom |"), std::string::npos) << row;
  }
  EXPECT_NE(r.out.find("10 run(s) diverged (non-finite loss); summary.h5 gives their results as +inf"), std::string::npos) << r.out;
  // Compute: a diverged run counts the steps its log holds, not its budget.
  int64_t boom_logged = 0;
  for (const char* run : {"boom_B8_p0.01", "boom_B12_p0.01", "boom_B8_p10000", "boom_B12_p10000"})
    boom_logged += static_cast<int64_t>(lrkit::h5::read_series(out + "/runs/" + run + "_s1234/log.h5", "/train/step").size());
  EXPECT_LT(boom_logged, 40);
  EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", "/schedules/trained_steps")[3], static_cast<double>(boom_logged));
  EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", "/schedules/planned_steps")[3], 40.0);
  EXPECT_NE(r.out.find("| boom | separate | " + std::to_string(boom_logged) + " | 40 | 40 | 1.000 |"), std::string::npos) << r.out;
  // Rerun: a diverged run is done, not retried.
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  // With budget 8 alone, the longer runs hold the shorter ones, diverged where they diverged before their end.
  const auto fewer = lrkit::testing::write_text("sweep_diverged_fewer.cfg", lrkit::read_text(config).replace(
      lrkit::read_text(config).find("budgets = 8, 12"), 15, "budgets = 8"));
  r = run_lrkit("sweep --config " + fewer);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_main_p10000_s1234 holds a longer run (see its sweep_args.txt) whose first "),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" steps are this run's: it diverged before step "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(" steps are this run's: nothing to train"), std::string::npos) << r.out;
  const auto fewer_peak = lrkit::h5::read_series(out + "/summary.h5", "/results/peak");
  const auto fewer_loss = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  const auto fewer_schedule = lrkit::h5::read_series(out + "/summary.h5", "/results/schedule");
  ASSERT_EQ(fewer_loss.size(), 8u);
  for (size_t i = 0; i < fewer_loss.size(); ++i)
    EXPECT_EQ(std::isfinite(fewer_loss[i]), fewer_peak[i] != 1e4 && fewer_schedule[i] != 3) << i;
  // More budgets: a run that diverged under rates the longer one keeps diverges again, checkpoint or not; it is not
  // moved aside and trained until it diverges again. (Those without a checkpoint were.)
  const auto more = lrkit::testing::write_text("sweep_diverged_more.cfg", lrkit::read_text(config).replace(
      lrkit::read_text(config).find("budgets = 8, 12"), 15, "budgets = 8, 12, 16"));
  r = run_lrkit("sweep --config " + more);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("moved aside"), std::string::npos) << r.out;
  for (const char* diverged : {"wsd_main_p10000_s1234", "wsds_p10000_s1234"})
    EXPECT_EQ(r.out.find(std::string("sweep: started ") + diverged), std::string::npos) << diverged << "\n" << r.out;
  EXPECT_NE(r.out.find("sweep: started cos_B16_p10000_s1234"), std::string::npos) << r.out;
}

TEST(SweepCommand, ABranchThatForksBeforeItsMainRunDivergedStillRuns) {
  // At peak 40 the main run (to the last fork, step 31) diverges at step 17 (measured): budget 8's
  // branch forks at step 7, before that, and starts from its checkpoint; budget 40's forks after it.
  const auto out = out_dir("sweep_diverged_main");
  const auto config = lrkit::testing::write_text(
      "sweep_diverged_main.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                 "\nbudgets = 8, 40\npeaks = 40\n[schedules]\nwsd = branching: wsd(warmup=4, decay=25%)\n");
  const auto r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_main_p40_s1234 diverged (non-finite loss"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: started wsd_B8_p40_s1234"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: wsd_B40_p40_s1234 diverged: wsd_main_p40_s1234 diverged before its fork at step 31"), std::string::npos)
      << r.out;
}

// {run:NAME}: the refinement of each budget's linear run starts once that run finished and trains what `lrkit train`
// trains with the spec it names; a diverged linear run leaves its refinement diverged too (a result: exit 0).
TEST(SweepCommand, ARunThatReadsAnotherRunsLogStartsAfterItAndSharesItsDivergence) {
  const auto out = out_dir("sweep_reads_log");
  const auto config = lrkit::testing::write_text(
      "sweep_reads_log.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out + "\nbudgets = 8, 12\npeaks = 1e-2, 1e4\njobs = 2\n"
                             "[schedules]\nlin = linear(warmup=2)\nref = refined(norms={run:lin}, norm=l1)\n");
  auto r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string budget : {"8", "12"}) {
    const std::string suffix = "_B" + budget + "_p0.01_s1234";
    const auto finished = r.out.find("sweep: lin" + suffix + " finished"), started = r.out.find("sweep: started ref" + suffix);
    ASSERT_NE(started, std::string::npos) << r.out;
    EXPECT_LT(finished, started) << r.out;
    EXPECT_NE(r.out.find("sweep: ref_B" + budget + "_p10000_s1234 diverged: the run whose log its schedule reads, lin_B" + budget +
                         "_p10000_s1234, diverged"),
              std::string::npos)
        << r.out;
  }
  const auto schedule = lrkit::h5::read_series(out + "/summary.h5", "/results/schedule");
  const auto peak = lrkit::h5::read_series(out + "/summary.h5", "/results/peak");
  const auto loss = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  ASSERT_EQ(loss.size(), 8u);
  for (size_t i = 0; i < loss.size(); ++i) EXPECT_EQ(std::isfinite(loss[i]), peak[i] == 1e-2) << i;
  // The same refinement trained by hand gives the same held-out loss (budget 12 of ref at peak 0.01: result 5).
  ASSERT_EQ(schedule[5], 1);
  const auto by_hand = out_dir("sweep_reads_log_by_hand");
  r = run_lrkit("train --config " + tiny_config() + " --train.steps=12 --schedule.spec=\"refined(norms=" + out +
                "/runs/lin_B12_p0.01_s1234/log.h5, norm=l1, peak=0.01)\" --out " + by_hand);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(eval_at(by_hand + "/log.h5", 12), loss[5]);
  // Rerun: nothing starts, and the refinements of the diverged runs are diverged again.
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 0) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", "/results/loss"), loss);
  // A value the plan could not check (the log did not exist) fails its run when it starts, naming the value.
  const auto bad = lrkit::testing::write_text(
      "sweep_reads_log_bad.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out + "\nbudgets = 8, 12\npeaks = 1e-2\n"
                                 "[schedules]\nlin = linear(warmup=2)\nref_l3 = refined(norms={run:lin}, norm=l3)\n");
  r = run_lrkit("sweep --config " + bad);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("sweep: ref_l3_B8_p0.01_s1234 failed (exit 2)"), std::string::npos) << r.out;
  EXPECT_NE(lrkit::read_text(out + "/runs/ref_l3_B8_p0.01_s1234/train.txt").find("'norm' must be"), std::string::npos);
  // Corrected, the same schedule name runs: its failed directories hold no checkpoint, so they are moved aside
  // (kept, with the failure's output) and the runs start afresh.
  const auto corrected = lrkit::testing::write_text(
      "sweep_reads_log_corrected.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out + "\nbudgets = 8, 12\npeaks = 1e-2\n"
                                       "[schedules]\nlin = linear(warmup=2)\nref_l3 = refined(norms={run:lin}, norm=l2)\n");
  r = run_lrkit("sweep --config " + corrected);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const std::string budget : {"8", "12"}) {
    const auto dir = out + "/runs/ref_l3_B" + budget + "_p0.01_s1234";
    EXPECT_NE(r.out.find("sweep: " + dir + " was started with other settings and holds no checkpoint; moved aside to " + dir + ".old-"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("sweep: ref_l3_B" + budget + "_p0.01_s1234 finished"), std::string::npos) << r.out;
  }
  int kept = 0;
  for (const auto& entry : fs::directory_iterator(out + "/runs")) {
    const auto name = entry.path().filename().string();
    if (name.rfind("ref_l3_B8_p0.01_s1234.old-", 0) != 0) continue;
    ++kept;
    EXPECT_NE(lrkit::read_text(entry.path() / "train.txt").find("'norm' must be"), std::string::npos) << name;
  }
  EXPECT_EQ(kept, 1);
}

// The sweep files under configs/ plan as the README's experiments run them: from the repository root, where
// data/kjv.txt is (a stand-in corpus here) and configs/quickstart.cfg is every run's base.
TEST(SweepCommand, TheShippedSweepFilesPlan) {
  const auto root = fs::path(out_dir("sweep_shipped"));
  fs::create_directories(root / "data");
  fs::copy_file(lrkit::testing::write_text("sweep_shipped_corpus.txt", std::string(200000, 'a')), root / "data" / "kjv.txt");
  fs::create_directory_symlink(fs::path(LRKIT_SOURCE_DIR) / "configs", root / "configs");
  for (const char* file : {"sweep_schedules.cfg", "sweep_wsds.cfg", "sweep_tuned_peaks.cfg"}) {
    const auto r = lrkit::testing::run_command("cd " + root.string() + " && " + LRKIT_BINARY + " sweep --config configs/" + file + " --dry-run");
    EXPECT_EQ(r.code, 0) << file << "\n" << r.out;
    EXPECT_FALSE(fs::exists(root / "out")) << "a dry run starts nothing";
  }
}

TEST(SweepCommand, AMalformedLrkitCoresIsRefusedBeforeAnyRunStarts) {
  const auto out = out_dir("sweep_bad_cores");
  const auto config = lrkit::testing::write_text("sweep_bad_cores.cfg", "[sweep]\ntrain_config = " + tiny_config() +
                                                                            "\nout = " + out + "\nbudgets = 6\n[schedules]\nc = cosine(peak=1e-2)\n");
  const auto r = lrkit::testing::run_command("LRKIT_CORES=half " + std::string(LRKIT_BINARY) + " sweep --config " + config);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("environment variable LRKIT_CORES='half' is not a whole number of cores >= 1"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(out + "/runs")) << r.out;
}

// A sweep in a batch script of several SLURM tasks (SLURM_PROCID, SLURM_NTASKS, no srun step): its runs are its own
// processes, not SLURM's tasks (each was refused, or waited for the absent tasks, before).
TEST(SweepCommand, RunsInABatchScriptOfSeveralSlurmTasksAreTheSweepsOwn) {
  const auto out = out_dir("sweep_sbatch");
  const auto config = lrkit::testing::write_text("sweep_sbatch.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                                                         "\nbudgets = 6\n[schedules]\nc = cosine(peak=1e-2)\n");
  const auto r = lrkit::testing::run_command("env -u RANK -u WORLD_SIZE -u SLURM_STEP_NUM_TASKS SLURM_PROCID=0 SLURM_NTASKS=4 " +
                                             std::string(LRKIT_BINARY) + " sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(out + "/runs/c_B6_s1234/sweep_done")) << r.out;
}

TEST(SweepCommand, AKilledRunWithItsFinalCheckpointCountsAsFinished) {
  const auto out = out_dir("sweep_marker");
  const auto config = lrkit::testing::write_text("sweep_marker.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                                                           "\nbudgets = 6\n[schedules]\nc = cosine(peak=1e-2)\n");
  auto r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  fs::remove(out + "/runs/c_B6_s1234/sweep_done");  // killed between the run's exit and the marker
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("1 finished before"), std::string::npos) << r.out;
}

// Its train config edited after the sweep ran (a wider model), a rerun skipped the finished runs and summarized their
// results, trained under the old settings, as the new sweep's; with a budget added, the new runs trained the new model
// beside them. Now a run whose log holds other settings that define it is refused before anything starts.
TEST(SweepCommand, RunsTrainedUnderEarlierSettingsStopTheSweepBeforeAnythingStarts) {
  const auto out = out_dir("sweep_edited");
  const std::string tiny = lrkit::read_text(tiny_config());
  const auto shared_corpus = (fs::path(tiny_config()).parent_path() / "dp_corpus.txt").string();
  const std::string text = lrkit::read_text(shared_corpus);
  const auto corpus = lrkit::testing::write_text("sweep_edited_corpus.txt", text);  // its own copy, rewritten below
  const std::string train = std::string(tiny).replace(tiny.find(shared_corpus), shared_corpus.size(), corpus);
  const auto train_config = lrkit::testing::write_text("sweep_edited_train.cfg", train);
  const auto sweep = [&](const std::string& budgets) {
    return lrkit::testing::write_text("sweep_edited.cfg", "[sweep]\ntrain_config = " + train_config + "\nout = " + out +
                                                              "\nbudgets = " + budgets + "\n[schedules]\nc = cosine(peak=1e-2)\n");
  };
  auto r = run_lrkit("sweep --config " + sweep("4, 6"));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto summary = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  lrkit::testing::write_text("sweep_edited_train.cfg", std::string(train).replace(train.find("width = 16"), 10, "width = 32"));
  for (const char* budgets : {"4, 6", "4, 6, 8"}) {
    r = run_lrkit("sweep --config " + sweep(budgets));
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out, "lrkit sweep: run directory '" + out + "/runs/c_B4_s1234' (and 1 other run(s) of this sweep) holds a "
                     "run trained with other settings than the sweep gives it now: model.width = 16 there, 32 here (the "
                     "train config, the sweep file or a data file changed since it ran); put them back, or choose "
                     "another sweep.out for the new settings\n");
    EXPECT_FALSE(fs::exists(out + "/runs/c_B8_s1234")) << "nothing started";
  }
  // The evaluation the results are measured by too, though a resume of one run may change it.
  lrkit::testing::write_text("sweep_edited_train.cfg", std::string(train).replace(train.find("batches = 1"), 11, "batches = 2"));
  r = run_lrkit("sweep --config " + sweep("4, 6"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("with other settings than the sweep gives it now: eval.batches = 1 there, 2 here ("),
            std::string::npos) << r.out;
  lrkit::testing::write_text("sweep_edited_train.cfg", train);
  // The corpus rewritten in place (of the same size): every setting is as it was, but not what the runs trained on.
  lrkit::testing::write_text("sweep_edited_corpus.txt", std::string(text).replace(text.find("meek"), 4, "MEEK"));
  r = run_lrkit("sweep --config " + sweep("4, 6"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("with other settings than the sweep gives it now: the contents of data.path ('" + corpus + "') = " +
                       std::to_string(text.size()) + " bytes, sampled crc32:"),
            std::string::npos) << r.out;
  lrkit::testing::write_text("sweep_edited_corpus.txt", text);  // put back: the sweep goes on
  r = run_lrkit("sweep --config " + sweep("4, 6, 8"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(count(r.out, "sweep: started"), 1) << r.out;
  const auto extended = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  ASSERT_EQ(extended.size(), 3u);
  EXPECT_EQ(std::vector<double>(extended.begin(), extended.begin() + 2), summary);
}

TEST(SweepCommand, SigtermStopsEveryRunAndTheNextCallResumes) {
  const auto out = out_dir("sweep_interrupted");
  const auto config = lrkit::testing::write_text("sweep_interrupted.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                                                                "\nbudgets = 2000\n[schedules]\nc = cosine(peak=1e-2)\n"
                                                                                "[checkpoint]\nevery = 50\n[train]\nlog_every = 1000\n");
  // Wait until the run has written a checkpoint; a second sweep of the same directory then is refused at once (it
  // failed the run the first one trained, and wrote its summary over the first's). Then SIGTERM the sweep.
  const std::string dir = out + "/runs/c_B2000_s1234";
  const std::string sweep = std::string(LRKIT_BINARY) + " sweep --config " + config;
  auto r = lrkit::testing::run_command(sweep + " 2>&1 & pid=$!; " +
                                       "for i in $(seq 600); do ls " + dir + "/checkpoints/*.pt >/dev/null 2>&1 && break; sleep 0.05; done; " +
                                       sweep + " > " + out + ".second.txt 2>&1; echo \"second exit $?\"; " +
                                       "kill -TERM $pid; wait $pid; echo \"exit $?\"; sleep 0.2; pgrep -f '[o]ut=" + dir + "' >/dev/null && echo 'left running'; true");
  EXPECT_NE(r.out.find("second exit 2"), std::string::npos) << r.out;
  const std::string second = lrkit::read_text(out + ".second.txt");
  EXPECT_EQ(second.rfind("lrkit sweep: sweep directory '" + out + "' is in use by another lrkit sweep (pid ", 0), 0u) << second;
  EXPECT_EQ(second.substr(second.find(')')), "); wait for it or choose another sweep.out\n") << second;
  EXPECT_NE(r.out.find("exit 1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("interrupted; 1 running run(s) stopped"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("left running"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir + "/sweep_done"));
  r = run_lrkit("sweep --config " + config);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream log(dir + "/train.txt");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("resumed from " + dir + "/checkpoints/step_"), std::string::npos) << text;
  EXPECT_EQ(lrkit::h5::read_series(dir + "/log.h5", "/train/step").size(), 2000u) << "one row per step across the two calls";
}

TEST(SweepCommand, BadInputExitsTwoWithOneLine) {
  const auto out = out_dir("sweep_bad");
  const std::string head = "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out + "\nbudgets = 8\n";
  for (const auto& [text, needle] : std::vector<std::pair<std::string, std::string>>{
           {head + "metric = old\n[schedules]\nc = cosine(peak=1)\n", "sweep_bad.cfg' line 5: sweep.metric 'old' is not one of the runs' eval.sets"},
           {head + "[schedules]\nc = cosine(peak=1)\n[eval]\nsets = other=" + tiny_config() + "\n",
            "sweep_bad.cfg' line 8: sweep.metric 'heldout' is not one of the runs' eval.sets ('other="},
           {head + "[schedules]\nc = cosine(peak=1)\n[train]\nbatch = 7\naccumulation = 2\n",
            "sweep_bad.cfg' lines 8 and 9: the runs' configuration: train.batch (7) must be a multiple"},
           {head + "[schedules]\nc = cosine(peak=1)\n[trian]\nsteps = 3\n", "sweep_bad.cfg' line 8: unknown key 'trian.steps'; did you mean 'steps' in [train]?"},
           {head + "[schedules]\nc = coseine(peak=1)\n", "sweep_bad.cfg' line 6: schedule 'c'"},
           {head + "seeds = 1, 1\n[schedules]\nc = cosine(peak=1)\n", "sweep.seeds entry 2 (1) repeats entry 1"},
           {head + "[schedules]\nc = single: cosine(peak=1, total=4)\n", "ends at step 4, before its last milestone 8"},
           {head + "[schedules]\nc = cosine(peak=1)\n[data]\npath = " + out + "_missing.txt\n",
            "the runs' data file '" + out + "_missing.txt' does not exist or cannot be reached"},
           {head + "[schedules]\nc = cosine(peak=1)\n[model]\ncontext = 100000\n", "too small for context 100000"},
           {head + "[schedules]\nc = cosine(peak=1)\n[model]\nwidth = 65536\n",
            "the runs' configuration, 1 run(s) at a time (sweep.jobs, --jobs) of 1 worker(s) each: the run needs at least "},
       }) {
    const auto r = run_lrkit("sweep --config " + lrkit::testing::write_text("sweep_bad.cfg", text));
    EXPECT_EQ(r.code, 2) << needle << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << needle << "\n" << r.out;
    EXPECT_FALSE(fs::exists(out + "/runs")) << "nothing started for: " << needle;
  }
  // eval.sets set in the runs' train_config file: its line there too.
  std::ifstream tiny(tiny_config());
  const std::string tiny_text((std::istreambuf_iterator<char>(tiny)), std::istreambuf_iterator<char>());
  const auto sets_line = std::count(tiny_text.begin(), tiny_text.end(), '\n') + 2;
  const auto other_sets = lrkit::testing::write_text("sweep_bad_sets.cfg", tiny_text + "[eval]\nsets = other=" + tiny_config() + "\n");
  auto r = run_lrkit("sweep --config " + lrkit::testing::write_text("sweep_bad.cfg", "[sweep]\ntrain_config = " + other_sets +
                                                                          "\nout = " + out + "\nbudgets = 8\n[schedules]\nc = cosine(peak=1)\n"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("sweep.metric 'heldout' is not one of the runs' eval.sets ('other=" + tiny_config() +
                       "', set in config file '" + other_sets + "' line " + std::to_string(sets_line) + ")"),
            std::string::npos) << r.out;
  r = run_lrkit("sweep");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.out.find("--config SWEEP.cfg is required"), std::string::npos) << r.out;
  EXPECT_EQ(run_lrkit("sweep --dryrun").out,
            "lrkit sweep: unrecognised option '--dryrun'; did you mean --dry-run? (see lrkit sweep --help)\n");
  // A word that belongs to no option was dropped: `lrkit sweep --config S.cfg --jobs 2 3` ran with the 3 unsaid.
  const auto stray = run_lrkit("sweep --config sweep.cfg extra");
  EXPECT_EQ(stray.code, 2);
  EXPECT_NE(stray.out.find("lrkit sweep: unexpected argument 'extra': lrkit sweep takes options only (the sweep file is "
                           "--config FILE)"),
            std::string::npos)
      << stray.out;
}

}  // namespace
