// Per-rank signals from Weights & Biases runs: one run per rank, each run's rank found, read as the same signals
// written as JSON lines read; one run with a field per rank; resumed sessions; and every refusal, by run and byte.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "rank_log_refusal.hpp"
#include "test_files.hpp"
#include "wandb_framer.hpp"

namespace lrkit::diagnostics {
namespace {

using testing::config;
using testing::Framer;
using testing::history;
using testing::metric;
using testing::run;
using testing::write_bytes;
using testing::write_text;

// Rank k's signals at step t: a loss, a gradient norm and a cosine; rank 2 diverges at step 4 (NaN loss).
double loss_of(int rank, int step) { return rank == 2 && step == 4 ? std::nan("") : 3.0 - 0.1 * step + 0.01 * rank; }
double norm_of(int rank, int step) { return 1.0 + 0.05 * step + 0.2 * rank; }
double cosine_of(int rank, int step) { return 0.9 - 0.01 * step - 0.1 * rank; }
std::string json(double v) { return std::isnan(v) ? "NaN" : format_number(v); }

// Rank k's run as a loop logs it with wandb.log(..., step=global_step) and an evaluation every 3 steps, its step
// metric defined as Lightning's logger defines it; `first_record` opens the run (its ID, name, group and config).
std::string rank_run(int rank, const std::string& first_record, int first = 0, int last = 5) {
  Framer log;
  log.record(first_record);
  log.record(metric("", "*", "trainer/global_step"));
  for (int step = first; step <= last; ++step) {
    log.record(history({{"loss", json(loss_of(rank, step))},
                        {"grad_norm", json(norm_of(rank, step))},
                        {"cos_to_mean", json(cosine_of(rank, step))},
                        {"trainer/global_step", std::to_string(step)},
                        {"_step", std::to_string(2 * step)}}));
    if (step % 3 == 2) log.record(history({{"eval/loss", "2.0"}, {"trainer/global_step", std::to_string(step)}}));
  }
  return log.bytes();
}

// The same signals as one JSON-lines file per rank.
std::vector<std::string> json_lines(int ranks) {
  std::vector<std::string> paths;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string text;
    for (int step = 0; step <= 5; ++step)
      text += "{\"step\": " + std::to_string(step) + ", \"loss\": " + json(loss_of(rank, step)) +
              ", \"grad_norm\": " + json(norm_of(rank, step)) + ", \"cos_to_mean\": " + json(cosine_of(rank, step)) +
              "}\n";
    paths.push_back(write_text("jsonl_rank" + std::to_string(rank) + ".jsonl", text));
  }
  return paths;
}

// A session's directory, as wandb.init names it, below `project`/wandb.
std::string run_log(const std::string& project, const std::string& time, const std::string& id,
                    const std::string& bytes) {
  return write_bytes(project + "/wandb/run-" + time + "-" + id + "/run-" + id + ".wandb", bytes);
}

TEST(WandbRankLog, OneRunPerRankReadsAsTheSameSignalsInJsonLines) {
  // Started out of rank order (rank 2 first), each with its rank in its config; the directory above them is named.
  run_log("ddp", "20261201_100002", "r0", rank_run(0, run("r0", "worker-a", "ddp", {{"rank", "0"}})));
  run_log("ddp", "20261201_100001", "r1", rank_run(1, run("r1", "worker-b", "ddp", {{"rank", "1"}})));
  run_log("ddp", "20261201_100000", "r2", rank_run(2, run("r2", "worker-c", "ddp", {{"rank", "2"}})));
  const std::string project = (testing::scratch_dir() / "ddp").string();
  const RankLog log = read_inputs({project});
  expect_same_grid(log, read_rank_logs(json_lines(3)));
  EXPECT_TRUE(std::isnan(log.at(log.loss, 4, 2))) << "rank 2's NaN at step 4, as W&B logs a NaN";
  EXPECT_EQ(log.source, project + "/wandb/run-20261201_100000-r2/run-r2.wandb (W&B run log) and 2 more run(s), one "
                        "per rank");
  EXPECT_TRUE(log.warnings.empty()) << log.warnings.front();
  EXPECT_FALSE(log.records_sessions);
  // The run directories, by a glob: the same.
  expect_same_grid(read_inputs({project + "/wandb/run-*"}), log);
}

// make_wandb.py's ddp_rank_signals: the committed runs' values, exact decimals.
TEST(WandbRankLog, TheGoldenRunsOfADdpLoopAreReadRankByRank) {
  // Written by the protobuf library (tests/golden/make_wandb.py), one run per rank, rank 3's started first.
  const RankLog log = read_inputs({std::string(LRKIT_GOLDEN_DIR) + "/wandb/ddp"});
  ASSERT_EQ(log.ranks, 4);
  ASSERT_EQ(log.steps.size(), 40u) << "every step once: the evaluation's loss shares its step's row";
  for (int step = 0; step < 40; ++step)
    for (int rank = 0; rank < 4; ++rank) {
      const double wobble = ((7 * step + 3 * rank) % 11 - 5) / 1000.0;
      const bool bad = rank == 2 && step >= 25;
      EXPECT_EQ(log.at(log.loss, step, rank), 2.5 - step / 100.0 + wobble + (bad ? 0.5 : 0.0)) << step << " " << rank;
      EXPECT_EQ(log.at(log.grad_norm, step, rank), 1.0 + wobble * 4 + (bad ? 1.5 : 0.0)) << step << " " << rank;
      EXPECT_EQ(log.at(log.cos_to_mean, step, rank), 0.8 - std::fabs(wobble) * 10 - (bad ? 0.7 : 0.0));
    }
  EXPECT_TRUE(log.warnings.empty());
}

TEST(WandbRankLog, WithoutAConfigRankTheRunsNamesOrTheirStartOrderRankThem) {
  // Names that differ in a number alone: that number, in order; from 1, said in a warning.
  run_log("named", "20261201_100001", "a", rank_run(0, run("a", "gpu1", "")));
  run_log("named", "20261201_100000", "b", rank_run(1, run("b", "gpu2", "")));
  run_log("named", "20261201_100002", "c", rank_run(2, run("c", "gpu3", "")));
  const RankLog named = read_inputs({(testing::scratch_dir() / "named").string()});
  expect_same_grid(named, read_rank_logs(json_lines(3)));
  ASSERT_EQ(named.warnings.size(), 1u);
  EXPECT_EQ(named.warnings[0], "the W&B runs' names number them 1 to 3: ranked in that order, rank 0 = gpu1, rank 1 = "
                               "gpu2, rank 2 = gpu3");
  // rank-0, rank-1: the ranks themselves, nothing to say.
  run_log("ranked", "20261201_100001", "a", rank_run(0, run("a", "rank-0", "")));
  run_log("ranked", "20261201_100000", "b", rank_run(1, run("b", "rank-1", "")));
  const RankLog ranked = read_inputs({(testing::scratch_dir() / "ranked").string()});
  EXPECT_EQ(ranked.loss[1], loss_of(1, 0));
  EXPECT_TRUE(ranked.warnings.empty());
  // Names W&B made up: the order the runs started in, each named.
  run_log("unnamed", "20261201_100000", "x1", rank_run(0, run("x1", "dashing-river-7", "")));
  run_log("unnamed", "20261201_100001", "x2", rank_run(1, run("x2", "quiet-sun-8", "")));
  const RankLog ordered = read_inputs({(testing::scratch_dir() / "unnamed").string()});
  EXPECT_EQ(ordered.loss[1], loss_of(1, 0));
  ASSERT_EQ(ordered.warnings.size(), 1u);
  EXPECT_EQ(ordered.warnings[0], "the W&B runs name no rank (no 'rank' in their config, and their names do not differ "
                                 "in a number alone): ranked in the order they started, rank 0 = dashing-river-7 (x1), "
                                 "rank 1 = quiet-sun-8 (x2); wandb.init(config={'rank': rank}) names it");
  // --columns rank=KEY names the config's key.
  run_log("keyed", "20261201_100000", "k1", rank_run(1, run("k1", "", "", {{"global_rank", "1"}})));
  run_log("keyed", "20261201_100001", "k0", rank_run(0, run("k0", "", "", {{"global_rank", "0"}})));
  ReadOptions options;
  options.columns = {{"rank", "global_rank"}};
  const RankLog keyed = read_inputs({(testing::scratch_dir() / "keyed").string()}, options);
  EXPECT_EQ(keyed.loss[0], loss_of(0, 0));
  EXPECT_EQ(keyed.loss[1], loss_of(1, 0));
}

TEST(WandbRankLog, AResumedRunsLaterSessionReplacesTheStepsItLogsAgain) {
  // Rank 1's and rank 0's runs killed after step 4 and resumed from step 3 (wandb.init(id=..., resume="allow")): the
  // resumed sessions log 3..5 again, a second session directory each; latest-run links to one of them.
  for (const auto& [rank, id] : {std::pair<int, std::string>{0, "p"}, {1, "q"}}) {
    const std::string first = run("" + id, "rank-" + std::to_string(rank), "");
    run_log("resumed", "20261201_10000" + std::to_string(rank), id, rank_run(rank, first, 0, 4));
    Framer again;
    again.record(run(id, "rank-" + std::to_string(rank), "")).record(metric("", "*", "trainer/global_step"));
    for (int step = 3; step <= 5; ++step)
      again.record(history({{"loss", json(loss_of(rank, step) + 1)},
                            {"grad_norm", json(norm_of(rank, step))},
                            {"cos_to_mean", json(cosine_of(rank, step))},
                            {"trainer/global_step", std::to_string(step)}}));
    run_log("resumed", "20261201_12000" + std::to_string(rank), id, again.bytes());
  }
  const std::string project = (testing::scratch_dir() / "resumed").string();
  ASSERT_EQ(::symlink("run-20261201_120001-q", (project + "/wandb/latest-run").c_str()), 0);
  const RankLog log = read_inputs({project});
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(log.at(log.loss, 2, 1), loss_of(1, 2)) << "the first session's";
  EXPECT_EQ(log.at(log.loss, 4, 1), loss_of(1, 4) + 1) << "the resumed session's, not the first's";
  EXPECT_TRUE(log.records_sessions);
  ASSERT_EQ(log.resumes.size(), 1u) << "both ranks resumed at step 3: one resume";
  EXPECT_EQ(log.resumes[0].step, 3.0);
  // A glob over wandb/* meets latest-run too: the same session, read once.
  expect_same_grid(read_inputs({project + "/wandb/*"}), log);
}

TEST(WandbRankLog, OneRunWithAFieldPerRankIsRead) {
  // Rank 0 gathers every rank's values and logs them: loss_0, grad_norm_0, ...; and, as a dict per rank,
  // {"rank0": {"loss": ...}} (W&B's rank0.loss) with --columns.
  Framer wide, nested;
  for (int step = 0; step <= 5; ++step) {
    std::vector<std::pair<std::string, std::string>> items{{"_step", std::to_string(step)}};
    std::vector<std::pair<std::string, std::string>> dicts{{"_step", std::to_string(step)}};
    for (int rank = 0; rank < 3; ++rank) {
      const std::string k = std::to_string(rank);
      items.push_back({"loss_" + k, json(loss_of(rank, step))});
      items.push_back({"grad_norm_" + k, json(norm_of(rank, step))});
      items.push_back({"cos_to_mean_" + k, json(cosine_of(rank, step))});
      dicts.push_back({"rank" + k, "{\"loss\": " + json(loss_of(rank, step)) + ", \"norms\": {\"grad\": " +
                                       json(norm_of(rank, step)) + "}, \"cos\": " + json(cosine_of(rank, step)) + "}"});
    }
    wide.record(history(items));
    nested.record(history(dicts));
  }
  expect_same_grid(read_inputs({write_bytes("wide/run-w.wandb", wide.bytes())}), read_rank_logs(json_lines(3)));
  ReadOptions options;
  options.columns = {
      {"loss", "rank{rank}.loss"}, {"grad_norm", "rank{rank}.norms.grad"}, {"cos_to_mean", "rank{rank}.cos"}};
  expect_same_grid(read_inputs({write_bytes("nested/run-n.wandb", nested.bytes())}, options),
                   read_rank_logs(json_lines(3)));
}

TEST(WandbRankLog, ARunKilledMidRecordIsReadUpToItsLastWholeRow) {
  run_log("killed", "20261201_100000", "a", rank_run(0, run("a", "rank-0", "")));
  // Killed inside step 5's row, which the evaluation's row follows.
  const std::string whole = rank_run(1, run("b", "rank-1", ""));
  const size_t evaluation = 7 + history({{"eval/loss", "2.0"}, {"trainer/global_step", "5"}}).size();
  run_log("killed", "20261201_100001", "b", whole.substr(0, whole.size() - evaluation - 20));
  const RankLog log = read_inputs({(testing::scratch_dir() / "killed").string()});
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2, 3, 4}));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("skipped 1 step(s) missing a rank's row: step 5 (no row for rank 1)"),
            std::string::npos)
      << log.warnings[0];
}

// Lightning's and many loops' runs log each rank's loss and no gradient norm: read as the loss alone, with the
// warning that says so; a row with a loss but no gradient norm among rows with one is named by its byte.
TEST(WandbRankLog, RunsOfTheLossAloneAreReadAndARowWithoutTheOthersNormIsNamed) {
  for (int rank = 0; rank < 2; ++rank) {
    Framer log;
    const std::string id = "l" + std::to_string(rank);
    log.record(run(id, "w" + std::to_string(rank), "", {{"rank", std::to_string(rank)}}));
    for (int step = 0; step <= 5; ++step)
      log.record(history({{"loss", json(loss_of(rank, step))}, {"_step", std::to_string(step)}}));
    run_log("loss_only", "2026120" + std::to_string(rank + 1) + "_100000", id, log.bytes());
  }
  const RankLog log = read_inputs({(testing::scratch_dir() / "loss_only").string()});
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  for (int step = 0; step <= 5; ++step)
    for (int rank = 0; rank < 2; ++rank) EXPECT_EQ(log.at(log.loss, step, rank), loss_of(rank, step)) << step;
  EXPECT_TRUE(log.grad_norm.empty());
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], log.source + ": no gradient norms ('grad_norm', or 'grad_norm_0', ... with a field per "
                                          "rank): the loss alone is diagnosed; map another name with --columns "
                                          "grad_norm=NAME");
  Framer some;
  some.record(history({{"loss_0", "1"}, {"grad_norm_0", "1"}, {"loss_1", "2"}, {"_step", "0"}}));
  const std::string some_path = write_bytes("some_norms/run-s.wandb", some.bytes());
  EXPECT_EQ(refusal({some_path}), some_path + " (W&B run log) history row at byte 7: no gradient norm for rank 1 "
                                              "('grad_norm', or 'grad_norm_1' with a field per rank), where " +
                                     some_path + " (W&B run log) history row at byte 7 gives rank 0's at the same "
                                                 "step: a step gives one for every rank or for none");
}

TEST(WandbRankLog, RunsThatCannotBeRankedOrReadAreRefusedByName) {
  const std::string scratch = testing::scratch_dir().string();
  // One rank's run alone.
  const std::string alone = run_log("alone", "20261201_100000", "a", rank_run(1, run("a", "w", "", {{"rank", "1"}})));
  EXPECT_EQ(refusal({alone}), alone + " (W&B run log) history row at byte " +
                                  std::to_string(7 + 7 + run("a", "w", "", {{"rank", "1"}}).size() + 7 +
                                                 metric("", "*", "trainer/global_step").size()) +
                                  ": no field 'rank': the run of rank 1 (its config's 'rank') alone; give every rank's "
                                  "run (the directory above them, or their directories)");
  // Two runs of one rank; a rank without a run; a run without the rank the others give.
  run_log("twice", "20261201_100000", "a", rank_run(0, run("a", "w0", "", {{"rank", "1"}})));
  run_log("twice", "20261201_100001", "b", rank_run(1, run("b", "w1", "", {{"rank", "1"}})));
  EXPECT_EQ(refusal({scratch + "/twice"}), "W&B runs w0 (a) (" + scratch + "/twice/wandb/run-20261201_100000-a/run-a."
                                           "wandb) and w1 (b) (" + scratch + "/twice/wandb/run-20261201_100001-b/run-"
                                           "b.wandb) are both of rank 1");
  run_log("gap", "20261201_100000", "a", rank_run(0, run("a", "w0", "", {{"rank", "0"}})));
  run_log("gap", "20261201_100001", "b", rank_run(1, run("b", "w1", "", {{"rank", "2"}})));
  EXPECT_EQ(refusal({scratch + "/gap"}), "the 2 W&B runs' config 'rank' gives ranks 0, 2: no run of rank 1 (give every "
                                         "rank's run)");
  run_log("partial", "20261201_100000", "a", rank_run(0, run("a", "w0", "", {{"rank", "0"}})));
  run_log("partial", "20261201_100001", "b", rank_run(1, run("b", "w1", "")));
  EXPECT_EQ(refusal({scratch + "/partial"}), "W&B run w1 (b) (" + scratch + "/partial/wandb/run-20261201_100001-b/run-"
                                             "b.wandb): its config has no 'rank', which the other runs' give their "
                                             "rank");
  run_log("text", "20261201_100000", "a", rank_run(0, run("a", "w0", "", {{"rank", "\"zero\""}})));
  run_log("text", "20261201_100001", "b", rank_run(1, run("b", "w1", "", {{"rank", "1"}})));
  EXPECT_NE(refusal({scratch + "/text"}).find("its config's 'rank' is \"zero\", not a rank"), std::string::npos);
  // Two experiments' runs below one directory.
  run_log("groups", "20261201_100000", "a", rank_run(0, run("a", "rank-0", "exp1")));
  run_log("groups", "20261201_100001", "b", rank_run(1, run("b", "rank-1", "exp1")));
  run_log("groups", "20261201_100002", "c", rank_run(0, run("c", "rank-0", "exp2")));
  EXPECT_EQ(refusal({scratch + "/groups"}), "the 3 W&B runs are of 2 groups (group 'exp1': rank-0 (a) rank-1 (b); "
                                            "group 'exp2': rank-0 (c)): give one group's runs (their directories)");
  // Logs copied into directories of other names: named, to be given as files ('copied/*/*.wandb').
  write_bytes("copied/a/run-a.wandb", rank_run(0, run("a", "rank-0", "")));
  write_bytes("copied/b/run-b.wandb", rank_run(1, run("b", "rank-1", "")));
  EXPECT_EQ(refusal({scratch + "/copied"}), "'" + scratch + "/copied': the W&B runs below it (" + scratch + "/copied/a, " +
                                                scratch + "/copied/b) are not each a directory [offline-]run-DATE_TIME-"
                                                "ID holding one run log: name their .wandb files");
  EXPECT_EQ(read_inputs({scratch + "/copied/*/*.wandb"}).ranks, 2);
  // A W&B run beside a text log; an item that is no JSON; a loss without its step metric.
  EXPECT_EQ(refusal({alone, json_lines(1)[0]}), "'" + alone + "' is a W&B run log and '" + json_lines(1)[0] + "' a "
                                                "CSV or JSON-lines log: give logs of one kind (the W&B runs alone, the "
                                                "TensorBoard event files alone or the text logs alone)");
  Framer broken;
  broken.record(history({{"loss_0", "1.5x"}, {"_step", "0"}}));
  const std::string broken_path = write_bytes("broken/run-x.wandb", broken.bytes());
  EXPECT_EQ(refusal({broken_path}), broken_path + " (W&B run log) history row at byte 7: item 'loss_0': '1.5x' is not "
                                                  "JSON (text after the value at character 4)");
  Framer unsynced;
  unsynced.record(metric("", "*", "trainer/global_step")).record(history({{"loss", "1"}, {"_step", "0"}}));
  const std::string unsynced_path = write_bytes("unsynced/run-u.wandb", unsynced.bytes());
  EXPECT_NE(refusal({unsynced_path}).find(": it holds loss but not trainer/global_step, the step metric "
                                          "wandb.define_metric gave it"),
            std::string::npos);
}

}  // namespace
}  // namespace lrkit::diagnostics
