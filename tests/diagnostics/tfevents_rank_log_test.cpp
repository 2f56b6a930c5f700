// Per-rank signals from TensorBoard event files: a run per rank, ranked by its directory's name, at any depth;
// add_scalars' runs and a tag per rank, read as one run's; several writers' files in one directory; resumed sessions;
// and every refusal, by run, file and byte. The signals are compared with the same values written as JSON lines.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "rank_log_refusal.hpp"
#include "test_files.hpp"
#include "tfevents_writer.hpp"

namespace lrkit::diagnostics {
namespace {

using testing::EventFile;
using testing::write_bytes;
using testing::write_text;

// Rank k's signals at step t, as float32 (what add_scalar's simple_value holds); rank 2 diverges at step 4.
float loss_of(int rank, int step) {
  return rank == 2 && step == 4 ? std::nanf("") : static_cast<float>(3.0 - 0.1 * step + 0.01 * rank);
}
float norm_of(int rank, int step) { return static_cast<float>(1.0 + 0.05 * step + 0.2 * rank); }
float cosine_of(int rank, int step) { return static_cast<float>(0.9 - 0.01 * step - 0.1 * rank); }
std::string json(float v) { return std::isnan(v) ? "NaN" : format_number(v); }

const double kStart = 1764500000.0;  // the wall time the writers open at

// Rank k's session as a loop logs it with add_scalar, and an evaluation every 3 steps.
EventFile rank_session(int rank, int first = 0, int last = 5, double wall_time = kStart, float loss_shift = 0) {
  EventFile events(wall_time);
  for (int step = first; step <= last; ++step) {
    events.scalar("loss", step, loss_of(rank, step) + loss_shift)
        .scalar("grad_norm", step, norm_of(rank, step))
        .scalar("cos_to_mean", step, cosine_of(rank, step));
    if (step % 3 == 2) events.scalar("eval/loss", step, 2.0f);
  }
  return events;
}

// An event file named as SummaryWriter names it, below the scratch directory.
std::string event_file(const std::string& directory, const EventFile& events, int pid = 4242, double time = kStart) {
  return write_bytes(directory + "/events.out.tfevents." + std::to_string(static_cast<int64_t>(time)) + ".node1." +
                         std::to_string(pid) + ".0",
                     events.bytes());
}

std::string scratch(const std::string& name) { return (testing::scratch_dir() / name).string(); }

// The same signals as one JSON-lines file per rank.
std::vector<std::string> json_lines(int ranks, bool cosines = true) {
  std::vector<std::string> paths;
  for (int rank = 0; rank < ranks; ++rank) {
    std::string text;
    for (int step = 0; step <= 5; ++step)
      text += "{\"step\": " + std::to_string(step) + ", \"loss\": " + json(loss_of(rank, step)) +
              ", \"grad_norm\": " + json(norm_of(rank, step)) +
              (cosines ? ", \"cos_to_mean\": " + json(cosine_of(rank, step)) : "") + "}\n";
    paths.push_back(write_text("tb_jsonl_rank" + std::to_string(rank) + (cosines ? "" : "_nc") + ".jsonl", text));
  }
  return paths;
}

TEST(TfEventsRankLog, ARunPerRankReadsAsTheSameSignalsInJsonLines) {
  // Each rank's SummaryWriter(f"runs/ddp/rank_{rank}"); rank 0's main writer logs the rate in runs/ddp itself.
  for (int rank = 0; rank < 3; ++rank)
    event_file("tb_ddp/rank_" + std::to_string(rank), rank_session(rank), 100 + rank);
  event_file("tb_ddp", EventFile(kStart).scalar("lr", 0, 1e-3f).scalar("lr", 1, 2e-3f));
  const std::string project = scratch("tb_ddp");
  const RankLog log = read_inputs({project});
  expect_same_grid(log, read_rank_logs(json_lines(3)));
  EXPECT_TRUE(std::isnan(log.at(log.loss, 4, 2))) << "rank 2's NaN at step 4";
  EXPECT_EQ(log.source, project + "/rank_0 (TensorBoard run) and 2 more run(s), one per rank");
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], "'" + project + "': left out, no scalar tag 'loss' (or 'loss_0', ... with a tag per "
                             "rank) (its scalar tags: lr)");
  EXPECT_TRUE(log.records_sessions) << "each session writes a file of its own: none resumed here";
  EXPECT_TRUE(log.resumes.empty());
  // The run directories by a glob, and their files: the same, without the main writer's run.
  const RankLog globbed = read_inputs({project + "/rank_*"});
  expect_same_grid(globbed, log);
  EXPECT_TRUE(globbed.warnings.empty());
  expect_same_grid(read_inputs({project + "/rank_*/events.out.tfevents.*"}), log);
  // A loop that logs the gradient norm every other step: read at those steps, none at the others.
  for (int rank = 0; rank < 2; ++rank) {
    EventFile events(kStart);
    for (int step = 0; step <= 5; ++step) {
      events.scalar("loss", step, loss_of(rank, step));
      if (step % 2 == 0) events.scalar("grad_norm", step, norm_of(rank, step));
    }
    event_file("tb_sparse/rank_" + std::to_string(rank), events);
  }
  const RankLog sparse = read_inputs({scratch("tb_sparse")});
  EXPECT_EQ(sparse.grad_norm_logged, (std::vector<uint8_t>{1, 0, 1, 0, 1, 0}));
  EXPECT_EQ(sparse.at(sparse.grad_norm, 4, 1), norm_of(1, 4));
  EXPECT_TRUE(std::isnan(sparse.at(sparse.grad_norm, 3, 1)));
  EXPECT_TRUE(sparse.warnings.empty()) << sparse.warnings.front();
}

// make_tfevents.py's ddp_runs: make_wandb.py's 4-rank loop (rank 2 bad from step 25) as float32 scalars, exact.
TEST(TfEventsRankLog, TheGoldenRunsOfADdpLoopAreReadInBothLayouts) {
  // Written by the protobuf library (tests/golden/make_tfevents.py): a writer per rank, rank 3's opened first; and
  // rank 0's add_scalars of every rank's values, a run per rank and field below its writer's directory.
  const std::string golden = std::string(LRKIT_GOLDEN_DIR) + "/tfevents";
  const RankLog per_rank = read_inputs({golden + "/ddp"});
  const RankLog gathered = read_inputs({golden + "/ddp_gathered"});
  for (const RankLog* log : {&per_rank, &gathered}) {
    ASSERT_EQ(log->ranks, 4);
    ASSERT_EQ(log->steps.size(), 40u) << "every step once: the evaluation's loss shares its step's row";
    ASSERT_EQ(log->grad_norm.size(), log->loss.size());
    ASSERT_EQ(log->cos_to_mean.size(), log->loss.size());
    for (int step = 0; step < 40; ++step)
      for (int rank = 0; rank < 4; ++rank) {
        const double wobble = ((7 * step + 3 * rank) % 11 - 5) / 1000.0;
        const bool bad = rank == 2 && step >= 25;
        const auto f32 = [](double x) { return static_cast<double>(static_cast<float>(x)); };
        EXPECT_EQ(log->at(log->loss, step, rank), f32(2.5 - step / 100.0 + wobble + (bad ? 0.5 : 0.0))) << step;
        EXPECT_EQ(log->at(log->grad_norm, step, rank), f32(1.0 + wobble * 4 + (bad ? 1.5 : 0.0))) << step;
        EXPECT_EQ(log->at(log->cos_to_mean, step, rank), f32(0.8 - std::fabs(wobble) * 10 - (bad ? 0.7 : 0.0)));
      }
    EXPECT_TRUE(log->warnings.empty()) << log->warnings.front();
  }
  EXPECT_EQ(gathered.source, golden + "/ddp_gathered (TensorBoard run)");
}

TEST(TfEventsRankLog, TheNumberTheDirectoriesDifferInRanksThem) {
  // gpu1..gpu3, made out of order: ranked by their number, said in a warning; rank_0..rank_10 in number order.
  for (const int rank : {2, 0, 1}) event_file("tb_gpus/gpu" + std::to_string(rank + 1), rank_session(rank));
  const RankLog log = read_inputs({scratch("tb_gpus")});
  expect_same_grid(log, read_rank_logs(json_lines(3)));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], "the TensorBoard runs' directories number them 1 to 3: ranked in that order, rank 0 = "
                             "gpu1, rank 1 = gpu2, rank 2 = gpu3");
  for (int rank = 0; rank <= 10; ++rank) {
    EventFile events(kStart);
    for (int step = 0; step < 3; ++step) events.scalar("loss", step, static_cast<float>(rank));
    event_file("tb_eleven/rank_" + std::to_string(rank), events);
  }
  const RankLog eleven = read_inputs({scratch("tb_eleven")});
  ASSERT_EQ(eleven.ranks, 11);
  for (int rank = 0; rank <= 10; ++rank) EXPECT_EQ(eleven.at(eleven.loss, 1, rank), rank);
  EXPECT_TRUE(eleven.grad_norm.empty()) << "the loss alone";
  EXPECT_EQ(eleven.warnings.back(), scratch("tb_eleven") + "/rank_0 (TensorBoard run) and 10 more run(s), one "
                                    "per rank: no gradient norms ('grad_norm', or 'grad_norm_0', ... with a field per "
                                    "rank): the loss alone is diagnosed; map another name with --columns "
                                    "grad_norm=NAME");
}

TEST(TfEventsRankLog, AddScalarsRunsAndATagPerRankAreOneRunsValues) {
  // Rank 0 gathers every rank's values: writer.add_scalars("loss", {"0": l0, "1": l1, "2": l2}, step) puts each in a
  // run runs/wide/loss_K under the tag loss; the main writer's own file logs the rate.
  for (const char* name : {"loss", "grad_norm", "cos_to_mean"})
    for (int rank = 0; rank < 3; ++rank) {
      EventFile events(kStart);
      for (int step = 0; step <= 5; ++step) {
        const std::string field = name;
        events.scalar(field, step, field == "loss" ? loss_of(rank, step)
                                   : field == "grad_norm" ? norm_of(rank, step) : cosine_of(rank, step));
      }
      event_file("tb_wide/" + std::string(name) + "_" + std::to_string(rank), events);
    }
  event_file("tb_wide", EventFile(kStart).scalar("lr", 0, 1e-3f));
  const RankLog folded = read_inputs({scratch("tb_wide")});
  expect_same_grid(folded, read_rank_logs(json_lines(3)));
  EXPECT_EQ(folded.source, scratch("tb_wide") + " (TensorBoard run)");
  EXPECT_TRUE(folded.warnings.empty()) << folded.warnings.front();
  // add_scalars("train/loss", {"rank0": ...}): runs train_loss_rank0, ..., the tag train/loss; mapped.
  for (int rank = 0; rank < 2; ++rank) {
    EventFile events(kStart);
    for (int step = 0; step <= 5; ++step) events.scalar("train/loss", step, loss_of(rank, step));
    event_file("tb_keyed/train_loss_rank" + std::to_string(rank), events);
  }
  ReadOptions keyed;
  keyed.columns = {{"loss", "train/loss_rank{rank}"}};
  const RankLog mapped = read_inputs({scratch("tb_keyed")}, keyed);
  ASSERT_EQ(mapped.ranks, 2);
  EXPECT_EQ(mapped.at(mapped.loss, 3, 1), loss_of(1, 3));
  // One writer's tags loss_0, grad_norm_0, ... (add_scalar per rank): the same signals.
  EventFile tags(kStart);
  for (int step = 0; step <= 5; ++step)
    for (int rank = 0; rank < 3; ++rank) {
      const std::string k = std::to_string(rank);
      tags.scalar("loss_" + k, step, loss_of(rank, step)).scalar("grad_norm_" + k, step, norm_of(rank, step));
    }
  event_file("tb_tags", tags);
  expect_same_grid(read_inputs({scratch("tb_tags")}), read_rank_logs(json_lines(3, false)));
}

TEST(TfEventsRankLog, RunsAreFoundAtAnyDepthAsTensorBoardFindsThem) {
  // SummaryWriter(f"runs/ddp/rank_{rank}") with add_scalar("loss"), add_scalar("cos_to_mean") and
  // add_scalars("norms", {"grad": g}), whose value PyTorch puts in a run rank_K/norms_grad (the tag norms): two
  // levels below runs. A link inside a run back up to runs is not walked round, and a link to ddp is not read twice.
  for (int rank = 0; rank < 3; ++rank) {
    const std::string run = "tb_deep/ddp/rank_" + std::to_string(rank);
    EventFile own(kStart), norms(kStart);
    for (int step = 0; step <= 5; ++step) {
      own.scalar("loss", step, loss_of(rank, step)).scalar("cos_to_mean", step, cosine_of(rank, step));
      norms.scalar("norms", step, norm_of(rank, step));
    }
    event_file(run, own);
    event_file(run + "/norms_grad", norms);
  }
  const std::string runs = scratch("tb_deep");
  ASSERT_EQ(::symlink("../..", (runs + "/ddp/rank_0/up").c_str()), 0);
  ASSERT_EQ(::symlink("ddp", (runs + "/latest").c_str()), 0);
  ReadOptions norms;
  norms.columns = {{"grad_norm", "norms_grad"}};
  const RankLog log = read_inputs({runs}, norms);
  expect_same_grid(log, read_rank_logs(json_lines(3)));
  EXPECT_EQ(log.source, runs + "/ddp/rank_0 (TensorBoard run) and 2 more run(s), one per rank");
  EXPECT_TRUE(log.warnings.empty()) << log.warnings.front();
  expect_same_grid(read_inputs({runs + "/ddp"}, norms), log);
  // The runs of two jobs below one directory: their paths below it differ in more than a number, though their own
  // names are rank_0 to rank_2.
  for (const char* run : {"a/rank_0", "a/rank_1", "b/rank_2"})
    event_file(std::string("tb_jobs/") + run, rank_session(0));
  const std::string jobs = scratch("tb_jobs");
  EXPECT_EQ(refusal({jobs}), "the TensorBoard runs " + jobs + "/a/rank_0, " + jobs + "/a/rank_1, " + jobs +
                                 "/b/rank_2 do not differ in a number alone (rank_0, rank_1, ...), which would give "
                                 "their ranks: give one run (with a tag per rank, loss_0, loss_1, ...), or the runs of "
                                 "one job, a directory per rank named by its rank");
  EXPECT_EQ(read_inputs({jobs + "/a"}).ranks, 2);
  // Each rank's output directory with its writer's below it (out/rank_K/tensorboard): ranked by the directories above.
  for (const int rank : {1, 0})
    event_file("tb_outputs/rank_" + std::to_string(rank) + "/tensorboard", rank_session(rank));
  const RankLog outputs = read_inputs({scratch("tb_outputs")});
  ASSERT_EQ(outputs.ranks, 2);
  EXPECT_EQ(outputs.at(outputs.loss, 5, 1), loss_of(1, 5));
  EXPECT_EQ(outputs.source, scratch("tb_outputs") + "/rank_0/tensorboard (TensorBoard run) and 1 more run(s), one per "
                            "rank");
}

TEST(TfEventsRankLog, AResumedWritersLaterSessionReplacesTheStepsItLogsAgain) {
  // Each rank's loop killed after step 4 and resumed from its step-3 checkpoint an hour later: a second file in each
  // rank's directory logs 3..5 again, its loss 1 higher.
  for (int rank = 0; rank < 2; ++rank) {
    const std::string directory = "tb_resumed/rank_" + std::to_string(rank);
    event_file(directory, rank_session(rank, 0, 4));
    event_file(directory, rank_session(rank, 3, 5, kStart + 3600, 1.0f), 5000 + rank, kStart + 3600);
  }
  const RankLog log = read_inputs({scratch("tb_resumed")});
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(log.at(log.loss, 2, 1), loss_of(1, 2)) << "the first session's";
  EXPECT_EQ(log.at(log.loss, 3, 1), loss_of(1, 3) + 1.0f) << "the resumed session's, not the first's";
  EXPECT_TRUE(log.records_sessions);
  ASSERT_EQ(log.resumes.size(), 1u) << "both ranks resumed at step 3: one resume";
  EXPECT_EQ(log.resumes[0].step, 3.0);
  // SummaryWriter(purge_step=3) resuming, its first row at step 4: rows from step 3 on are the second session's.
  for (int rank = 0; rank < 2; ++rank) {
    const std::string directory = "tb_purged/rank_" + std::to_string(rank);
    event_file(directory, rank_session(rank, 0, 4));
    EventFile again(kStart + 3600, 3);
    for (int step = 4; step <= 5; ++step)
      again.scalar("loss", step, 9.0f).scalar("grad_norm", step, 1.0f).scalar("cos_to_mean", step, 0.5f);
    event_file(directory, again, 5000 + rank, kStart + 3600);
  }
  const RankLog purged = read_inputs({scratch("tb_purged")});
  EXPECT_EQ(purged.steps, (std::vector<double>{0, 1, 2, 4, 5})) << "step 3 purged and not logged again";
  EXPECT_EQ(purged.at(purged.loss, 3, 0), 9.0);
  ASSERT_EQ(purged.resumes.size(), 1u);
  EXPECT_EQ(purged.resumes[0].step, 3.0);
  // A loop run again in one process: its tags go back to step 2 in the same file.
  for (int rank = 0; rank < 2; ++rank) {
    EventFile events = rank_session(rank, 0, 4);
    for (int step = 2; step <= 5; ++step)
      events.scalar("loss", step, 7.0f).scalar("grad_norm", step, 1.0f).scalar("cos_to_mean", step, 0.5f);
    event_file("tb_again/rank_" + std::to_string(rank), events);
  }
  const RankLog again = read_inputs({scratch("tb_again")});
  EXPECT_EQ(again.steps, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(again.at(again.loss, 1, 1), loss_of(1, 1));
  EXPECT_EQ(again.at(again.loss, 2, 1), 7.0);
  ASSERT_EQ(again.resumes.size(), 1u);
  EXPECT_EQ(again.resumes[0].step, 2.0);
}

TEST(TfEventsRankLog, SeveralWritersFilesInOneDirectoryAreARankEach) {
  // Every rank calling SummaryWriter() in the same second: one directory, a file per process, written at once.
  const std::string directory = "tb_shared/Dec07_10-00-00_node1";
  for (int rank = 0; rank < 2; ++rank) event_file(directory, rank_session(rank, 0, 5, kStart + 0.1 * rank), 300 + rank);
  const std::string path = scratch(directory);
  const RankLog log = read_inputs({path});
  ASSERT_EQ(log.ranks, 2);
  EXPECT_EQ(log.at(log.loss, 5, 1), loss_of(1, 5));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_EQ(log.warnings[0], "'" + path + "' holds 2 event files written at the same time, one per writer: each is "
                             "read as a rank's, ranked in the order of their names (rank 0 = "
                             "events.out.tfevents.1764500000.node1.300.0, rank 1 = "
                             "events.out.tfevents.1764500000.node1.301.0); a directory per rank "
                             "(SummaryWriter(log_dir=f'runs/rank_{rank}')) names them");
  // One of them resumed later: which writer it continues is not known.
  event_file(directory, rank_session(0, 3, 5, kStart + 3600), 900, kStart + 3600);
  EXPECT_EQ(refusal({path}), "'" + path + "': its event files " + path + "/events.out.tfevents.1764500000.node1.300.0 "
                             "and " + path + "/events.out.tfevents.1764500000.node1.301.0 were written at the same "
                             "time (by two writers), and " + path + "/events.out.tfevents.1764500000.node1.300.0 and " +
                             path + "/events.out.tfevents.1764503600.node1.900.0 one after the other (a session "
                             "resumed): which writer a session resumed is not known; give each rank's writer a "
                             "directory of its own (SummaryWriter(log_dir=f'runs/rank_{rank}'))");
}

TEST(TfEventsRankLog, WhatCannotBeReadIsNamed) {
  // One rank's run alone.
  const std::string alone = event_file("tb_alone/rank_0", rank_session(0));
  EXPECT_EQ(refusal({scratch("tb_alone/rank_0")}),
            "'" + scratch("tb_alone/rank_0") + "': one TensorBoard run, whose tag 'loss' is one rank's: give every "
            "rank's run (the directory above them, or their directories), or a run with a tag per rank (loss_0, "
            "loss_1, ...)");
  // No loss in any run: their tags listed.
  event_file("tb_noloss/rank_0", EventFile(kStart).scalar("train/loss", 0, 1.0f).scalar("lr", 0, 0.1f));
  event_file("tb_noloss/rank_1", EventFile(kStart).scalar("train/loss", 0, 1.0f));
  EXPECT_EQ(refusal({scratch("tb_noloss")}),
            "no TensorBoard run logs a scalar tag 'loss' (or 'loss_0', ... with a tag per rank); the runs' scalar "
            "tags: " + scratch("tb_noloss") + "/rank_0: lr, train/loss; " + scratch("tb_noloss") + "/rank_1: "
            "train/loss; map another tag with --columns loss=TAG");
  event_file("tb_empty", EventFile(kStart).histogram("weights", 1));
  EXPECT_EQ(refusal({scratch("tb_empty")}), "the TensorBoard runs " + scratch("tb_empty") + " hold no scalars");
  ReadOptions train_loss;
  train_loss.columns = {{"loss", "train/loss"}};
  EXPECT_EQ(read_inputs({scratch("tb_noloss")}, train_loss).ranks, 2);
  // Lightning's versions are fits, not ranks; runs whose names do not number them.
  for (const char* run : {"version_0", "version_1"}) event_file(std::string("tb_lightning/") + run, rank_session(0));
  EXPECT_EQ(refusal({scratch("tb_lightning")}),
            "the TensorBoard runs " + scratch("tb_lightning") + "/version_0, " + scratch("tb_lightning") +
            "/version_1 are Lightning's versions (a run per fit, not per rank): give one of them");
  for (const char* run : {"Dec07_10-00-00_node1", "Dec07_11-30-00_node1"})
    event_file(std::string("tb_hf/") + run, rank_session(0));
  EXPECT_EQ(refusal({scratch("tb_hf")}),
            "the TensorBoard runs " + scratch("tb_hf") + "/Dec07_10-00-00_node1, " + scratch("tb_hf") +
            "/Dec07_11-30-00_node1 do not differ in a number alone (rank_0, rank_1, ...), which would give their "
            "ranks: give one run (with a tag per rank, loss_0, loss_1, ...), or the runs of one job, a directory per "
            "rank named by its rank");
  // A histogram under a field's tag; another tag's histogram is not read.
  event_file("tb_histogram/rank_0", rank_session(0).histogram("weights", 1));
  const std::string histogram = event_file("tb_histogram/rank_1", rank_session(1).histogram("grad_norm", 6));
  EXPECT_EQ(refusal({scratch("tb_histogram")}),
            histogram + " (TensorBoard event file) event at byte " +
                std::to_string(rank_session(1).bytes().size()) + ": tag 'grad_norm' at step 6 is not a scalar: a "
                "histogram, an image or audio");
  // A damaged record, named by its byte; a file cut inside its last record, read up to it.
  const std::string opening = EventFile(kStart).bytes();  // the file_version event's record
  const size_t first_record = EventFile(kStart).scalar("loss", 0, 1.0f).bytes().size() - opening.size();
  std::string damaged = rank_session(1).bytes();
  damaged[opening.size() + 20] ^= 0x01;
  event_file("tb_damaged/rank_0", rank_session(0));
  const std::string rank_1_file = "tb_damaged/rank_1/events.out.tfevents.1764500000.node1.4242.0";
  const std::string damaged_path = write_bytes(rank_1_file, damaged);
  EXPECT_EQ(refusal({scratch("tb_damaged")}),
            "'" + damaged_path + "': the record at byte " + std::to_string(opening.size()) + " is damaged (the "
            "checksum of its " + std::to_string(first_record - 16) + " bytes of data does not match)");
  const std::string whole = rank_session(1).bytes();
  write_bytes(rank_1_file, whole.substr(0, whole.size() - 3));
  const RankLog cut = read_inputs({scratch("tb_damaged")});
  EXPECT_EQ(cut.steps.back(), 5.0) << "the last record cut was rank 1's eval/loss or cosine: every step is whole";
  // An event file beside a text log.
  const std::string text = json_lines(1)[0];
  EXPECT_EQ(refusal({alone, text}), "'" + alone + "' is a TensorBoard event file and '" + text + "' a CSV or "
                                    "JSON-lines log: give logs of one kind (the W&B runs alone, the TensorBoard "
                                    "event files alone or the text logs alone)");
}

}  // namespace
}  // namespace lrkit::diagnostics
