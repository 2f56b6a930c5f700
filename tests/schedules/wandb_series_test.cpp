// Weights & Biases run logs: the golden files tests/golden/make_wandb.py writes with the protobuf library, read at
// the steps W&B plots them against; logs framed here around the format's edge cases; cut, damaged and wrong files
// read up to the cut or refused by name and byte, never a crash.
#include "wandb_series.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/common/wandb_log_reader.hpp"
#include "lrkit/schedules/series_file.hpp"
#include "test_files.hpp"
#include "wandb_framer.hpp"

namespace lrkit::schedules {
namespace {

using testing::field;
using testing::Framer;
using testing::history;
using testing::metric;
using testing::write_bytes;

const std::string kGolden = std::string(LRKIT_GOLDEN_DIR) + "/wandb";
const std::string kTrainerRun = kGolden + "/hf_output/wandb/run-20261127_000000-lrkhf001";

std::string refusal(const std::string& path, const std::string& column, const std::string& steps = "step") {
  try {
    read_series_file(path, column, steps, RepeatedSteps::Replace);
  } catch (const SeriesFileError& e) {
    return e.what();
  }
  return "(no error)";
}

// make_wandb.py's Trainer rates: get_cosine_schedule_with_warmup, peak 5e-4, 20 of 200 steps warming up.
double hf_cosine_rate(double step) {
  if (step < 20) return 5e-4 * step / 20;
  return 5e-4 * std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 0.5 * 2.0 * (step - 20) / 180)));
}

TEST(WandbSeries, ATrainersRunIsReadAtItsGlobalStepWithItsMaxSteps) {
  const Series lr = read_series_file(kTrainerRun, "train/learning_rate", "train/step", RepeatedSteps::Replace);
  ASSERT_EQ(lr.steps.size(), 20u) << "the evaluations' and the summary's rows hold no rate";
  for (size_t i = 0; i < lr.steps.size(); ++i) {
    EXPECT_EQ(lr.steps[i], 10.0 * static_cast<double>(i + 1));
    EXPECT_DOUBLE_EQ(lr.values[i], hf_cosine_rate(lr.steps[i]));
  }
  EXPECT_EQ(lr.run_steps, 200) << "TrainingArguments' max_steps, in the config (a record of 3 chunks)";
  EXPECT_EQ(lr.source, kTrainerRun + "/run-lrkhf001.wandb");
  EXPECT_FALSE(lr.last_line_cut);
  // refine's names, /train/grad_norm at /train/step: the tag found whole, the steps by the step metric.
  const Series norms = read_series_file(kTrainerRun, "/train/grad_norm", "/train/step");
  EXPECT_EQ(norms.steps, lr.steps);
  EXPECT_DOUBLE_EQ(norms.values[0], 0.5 + 2.0 / std::sqrt(10.0));
  const Series eval = read_series_file(kTrainerRun + "/run-lrkhf001.wandb", "eval/loss", "step");
  EXPECT_EQ(eval.steps, (std::vector<double>{50, 100, 150, 200})) << "the file itself; eval rows at the global step";
  EXPECT_EQ(eval.source, "");
  // train/global_step's own definition has no step metric and shadows the glob: it is plotted at _step.
  const Series global = read_series_file(kTrainerRun, "train/global_step", "step");
  EXPECT_EQ(global.steps.front(), 0.0);
  EXPECT_EQ(global.values.front(), 10.0);
  EXPECT_EQ(global.steps.size(), 25u) << "20 training rows, 4 evaluations and the summary row";
}

TEST(WandbSeries, LightningsAndAPlainLoopsRunsAreReadAtTheirSteps) {
  const std::string lightning = kGolden + "/lightning/wandb/run-20261128_040000-lrkpl002";
  const Series lr = read_series_file(lightning, "lr-AdamW", "step");
  ASSERT_EQ(lr.steps.size(), 60u);
  EXPECT_EQ(lr.steps[59], 59.0) << "trainer/global_step, not _step (which counts the loss rows too)";
  EXPECT_DOUBLE_EQ(lr.values[30], 1e-3 * 30 / 50);
  EXPECT_EQ(lr.run_steps, 0) << "max_steps -1: the epochs set the length";
  EXPECT_EQ(read_series_file(lightning, "train_loss", "step").steps[1], 9.0);
  const std::string loop = kGolden + "/loop/run-lrkpy003.wandb";
  const Series rate = read_series_file(loop, "/train/lr", "/train/step");
  ASSERT_EQ(rate.steps.size(), 39u) << "update 35 logged lr=None";
  EXPECT_EQ(rate.steps[35], 36.0);
  EXPECT_DOUBLE_EQ(rate.values[2], 0.1 * 2 / 5);
  const Series loss = read_series_file(loop, "loss", "step");
  EXPECT_EQ(loss.steps.size(), 40u);
  EXPECT_TRUE(std::isnan(loss.values[30])) << "NaN, as Python's json writes it";
}

TEST(WandbSeries, ARunCutAnywhereIsReadUpToItsLastWholeRecord) {
  // A run killed, or still writing: every prefix of the file reads the rows its whole records hold.
  const std::string whole = read_text(kGolden + "/loop/run-lrkpy003.wandb");
  const std::vector<double> all = read_series_file(kGolden + "/loop/run-lrkpy003.wandb", "loss", "step").steps;
  size_t previous = 0;
  for (size_t size = 7; size <= whole.size(); ++size) {
    const std::string path = write_bytes("cut.wandb", whole.substr(0, size));
    size_t rows = 0;
    try {
      const Series s = read_series_file(path, "loss", "step");
      rows = s.steps.size();
      ASSERT_EQ(s.steps, std::vector<double>(all.begin(), all.begin() + static_cast<long>(rows))) << size;
    } catch (const SeriesFileError& e) {
      ASSERT_EQ(std::string(e.what()).find("': no history row holds 'loss'"), path.size() + 1) << size << e.what();
    }
    ASSERT_GE(rows, previous) << size;
    previous = rows;
  }
  EXPECT_EQ(previous, all.size());
}

TEST(WandbSeries, BlocksEndsPaddingAndLongRecordsAreFramedAsLevelDBsLog) {
  Framer log;
  log.record(metric("", "train/*", "train/global_step"));
  log.record(history({{"train/lr", "0.5"}, {"train/global_step", "10"}, {"_step", "0"}}));
  log.leave(3);  // the next chunk cannot start here: 3 bytes of zeros end the block
  log.record(history({{"train/lr", "0.25"}, {"train/global_step", "20"}, {"_step", "1"}}));
  log.leave(7);  // a header fits, no data: an empty FIRST chunk, the record in the next block
  log.record(history({{"train/lr", "0.125"}, {"train/global_step", "30"}, {"_step", "2"}}));
  // A row of 100 KB (a table logged beside the rate): FIRST, MIDDLE, MIDDLE, LAST.
  log.record(history(
      {{"train/lr", "Infinity"}, {"train/global_step", "40"}, {"table", '"' + std::string(100000, 't') + '"'}}));
  log.record(history({{"train/lr", "1e999"}, {"train/global_step", "50"}}));
  const std::string path = write_bytes("framed/run-x.wandb", log.bytes());
  const Series s = read_series_file(path, "train/lr", "step");
  EXPECT_EQ(s.steps, (std::vector<double>{10, 20, 30, 40, 50}));
  EXPECT_EQ(s.values[2], 0.125);
  EXPECT_TRUE(std::isinf(s.values[3]) && std::isinf(s.values[4]));
  const std::string run = std::filesystem::path(path).parent_path().string();
  EXPECT_EQ(read_series_file(run, "train/lr", "step").source, path) << "the run's directory";
  // Zeros where a chunk should start (a block never written) are passed over to the next block.
  Framer zeroed;
  zeroed.record(history({{"train/lr", "0.5"}, {"_step", "0"}})).zeros_to_block_end();
  zeroed.record(history({{"train/lr", "0.25"}, {"_step", "1"}}));
  EXPECT_EQ(read_series_file(write_bytes("zeroed.wandb", zeroed.bytes()), "train/lr", "step").values,
            (std::vector<double>{0.5, 0.25}));
}

TEST(WandbSeries, ADictLoggedAsOneItemIsReadByItsMembersPath) {
  // wandb.log({"train": {"lr": ..., "opt": {"beta1": ...}, "step": ...}}): one item, train, whose members W&B names
  // train.lr, train.opt.beta1 and train.step; define_metric("train.lr", step_metric="train.step").
  Framer log;
  log.record(metric("train.lr", "", "train.step"));
  for (int step = 0; step < 3; ++step)
    log.record(history({{"train", "{\"lr\": " + std::to_string(0.5 / (step + 1)) + ", \"opt\": {\"beta1\": 0.9}, "
                                  "\"step\": " + std::to_string(100 + step) + "}"},
                        {"_step", std::to_string(step)}}));
  const std::string path = write_bytes("nested.wandb", log.bytes());
  const Series lr = read_series_file(path, "train.lr", "step");
  EXPECT_EQ(lr.steps, (std::vector<double>{100, 101, 102})) << "at its step metric, itself a member";
  EXPECT_EQ(lr.values[1], 0.25);
  const Series beta = read_series_file(path, "train.opt.beta1", "step");
  EXPECT_EQ(beta.steps, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(beta.values[2], 0.9);
  EXPECT_NE(refusal(path, "train.opt.beta2").find("no history row holds 'train.opt.beta2' (they hold train, _step)"),
            std::string::npos);
}

TEST(WandbSeries, DamagedOrForeignRecordsAreNamedByTheirFileAndByte) {
  const std::string golden = read_text(kGolden + "/loop/run-lrkpy003.wandb");
  std::string flipped = golden;
  flipped[200] ^= 0x04;
  const std::string damaged = write_bytes("damaged.wandb", flipped);
  const std::string what = refusal(damaged, "loss");
  EXPECT_EQ(what.find("'" + damaged + "': the chunk at byte "), 0u) << what;
  EXPECT_NE(what.find(" is damaged (the checksum of its type and "), std::string::npos) << what;
  std::string version = golden;
  version[6] = 2;
  const std::string newer = write_bytes("newer.wandb", version);
  EXPECT_EQ(refusal(newer, "loss"),
            "'" + newer + "' is a Weights & Biases run log of version 2; lrkit reads version 0");
  Framer orphan;
  orphan.chunk("abc", 3);
  const std::string middle = write_bytes("orphan.wandb", orphan.bytes());
  EXPECT_EQ(refusal(middle, "loss"), "'" + middle + "': the chunk at byte 7 is damaged (it continues a record that "
                                                    "was not started)");
  Framer trailer;
  trailer.record(history({{"loss", "1"}, {"_step", "0"}})).leave(3).record(history({{"loss", "2"}, {"_step", "1"}}));
  std::string dirty = trailer.bytes();
  dirty[32766] = 'z';
  const std::string dirty_path = write_bytes("dirty.wandb", dirty);
  EXPECT_EQ(refusal(dirty_path, "loss"), "'" + dirty_path + "': the chunk at byte 32765 is damaged (a block's last 3 "
                                                            "bytes are not zeros)");
  Framer foreign;
  foreign.record(history({{"loss", "1"}, {"_step", "0"}})).record("\x12\x09\x0a");
  const std::string foreign_path = write_bytes("foreign.wandb", foreign.bytes());
  const size_t second = 7 + 7 + history({{"loss", "1"}, {"_step", "0"}}).size();
  EXPECT_EQ(refusal(foreign_path, "loss"), "'" + foreign_path + "': the record at byte " + std::to_string(second) +
                                               " is no W&B record (field 2 runs past the end of its message)");
}

TEST(WandbSeries, RowsThatHoldNoNumberOrNoStepAreRefusedByTheirByte) {
  const auto refused = [](const std::string& name, const std::string& row_record, const std::string& column) {
    Framer log;
    log.record(metric("", "*", "global_step")).record(row_record);
    const std::string path = write_bytes(name, log.bytes());
    const size_t row_at = 14 + metric("", "*", "global_step").size();
    const std::string what = refusal(path, column);
    EXPECT_EQ(what.find("'" + path + "': the history row at byte " + std::to_string(row_at) + ": "), 0u) << what;
    return what.substr(what.find(": ", path.size() + 3) + 2);
  };
  EXPECT_EQ(refused("string.wandb", history({{"lr", "\"high\""}, {"global_step", "1"}}), "lr"),
            "lr: the string \"high\" is not a number");
  EXPECT_EQ(refused("histogram.wandb", history({{"lr", "{\"_type\": \"histogram\"}"}, {"global_step", "1"}}), "lr"),
            "lr: '{\"_type\": \"histogram\"}' is not a number");
  EXPECT_EQ(refused("broken.wandb", history({{"lr", "0.1x"}, {"global_step", "1"}}), "lr"),
            "lr: '0.1x' is not JSON (text after the value at character 4)");
  EXPECT_EQ(refused("unsynced.wandb", history({{"lr", "0.1"}, {"_step", "1"}}), "lr"),
            "it holds lr but not global_step, the step metric wandb.define_metric gave it");
  EXPECT_EQ(refused("step_nan.wandb", history({{"lr", "0.1"}, {"global_step", "NaN"}}), "lr"),
            "global_step: the step must be a finite number");
  Framer bare;
  bare.record(history({{"lr", "0.1"}}));
  const std::string stepless = write_bytes("stepless.wandb", bare.bytes());
  EXPECT_EQ(refusal(stepless, "lr"), "'" + stepless + "': the history row at byte 7: it holds lr but no step (_step)");
  EXPECT_EQ(refusal(kTrainerRun, "/train/lr"),
            "'" + kTrainerRun + "/run-lrkhf001.wandb': no history row holds 'train/lr' or 'lr' (they hold train/loss, "
            "train/grad_norm, train/learning_rate, train/epoch, train/global_step, _step, _runtime, _timestamp, "
            "eval/loss, eval/runtime, train/train_runtime, train/train_loss)");
}

// A session's log: wandb.init's define_metric of train/global_step, then a row per step of `steps` (rate step * 1e-5
// + shift), with max_steps in its config.
std::string session(int first, int last, double shift, int max_steps) {
  Framer log;
  log.record(field(5, field(1, field(1, "max_steps") + field(16, std::to_string(max_steps)))));
  log.record(metric("", "*", "train/global_step"));
  for (int step = first; step <= last; step += 10)
    log.record(history({{"train/learning_rate", format_number(step * 1e-5 + shift)},
                        {"train/global_step", std::to_string(step)}}));
  return log.bytes();
}

TEST(WandbSeries, ADirectoryReadsItsRunOrItsResumedSessionsAndNamesSeveralRuns) {
  const Series one = read_series_file(kGolden + "/hf_output", "train/learning_rate", "step");
  EXPECT_EQ(one.source, kTrainerRun + "/run-lrkhf001.wandb") << "the one run below wandb/";
  EXPECT_EQ(one.steps.size(), 20u);
  // Killed after step 150, resumed from checkpoint-100 (wandb.init(id="abc", resume="allow"), max_steps raised), in a
  // directory of its own; the resumed session ran offline (its name sorts first, its time second). latest-run links
  // to the newest.
  const std::string first = write_bytes("proj/wandb/run-20261201_100000-abc/run-abc.wandb", session(10, 150, 0.0, 200));
  const std::string second = write_bytes("proj/wandb/offline-run-20261201_120000-abc/run-abc.wandb",
                                         session(110, 250, 1.0, 250));
  const std::string project = (testing::scratch_dir() / "proj").string();
  ASSERT_EQ(::symlink("offline-run-20261201_120000-abc", (project + "/wandb/latest-run").c_str()), 0);
  const Series resumed = read_series_file(project, "train/learning_rate", "step", RepeatedSteps::Replace);
  std::vector<double> steps;
  for (int step = 10; step <= 250; step += 10) steps.push_back(step);
  EXPECT_EQ(resumed.steps, steps);
  EXPECT_EQ(resumed.replaced, 5u) << "110..150, logged again by the resumed session";
  EXPECT_EQ(resumed.values[9], 100 * 1e-5);
  EXPECT_EQ(resumed.values[10], 110 * 1e-5 + 1.0);
  EXPECT_EQ(resumed.run_steps, 250) << "the resumed session's max_steps";
  EXPECT_EQ(resumed.source, first + ", " + second);
  EXPECT_EQ(read_series_file(project + "/wandb", "train/learning_rate", "step", RepeatedSteps::Replace).steps, steps);
  EXPECT_EQ(read_series_file(project + "/wandb/latest-run", "train/learning_rate", "step").steps.front(), 110.0);
  write_bytes("proj/wandb/run-20261202_000000-xyz/run-xyz.wandb", session(10, 20, 0.0, 20));
  const std::string what = refusal(project, "train/learning_rate");
  EXPECT_NE(what.find("; the W&B runs below it: " + project + "/wandb/latest-run, " + project +
                      "/wandb/offline-run-20261201_120000-abc, " + project + "/wandb/run-20261201_100000-abc, " +
                      project + "/wandb/run-20261202_000000-xyz: name one"),
            std::string::npos)
      << "two runs: " << what;
  write_bytes("two_logs/run-a.wandb", read_text(kGolden + "/loop/run-lrkpy003.wandb"));
  write_bytes("two_logs/run-b.wandb", read_text(kGolden + "/loop/run-lrkpy003.wandb"));
  const std::string two = (testing::scratch_dir() / "two_logs").string();
  EXPECT_EQ(refusal(two, "loss"), "'" + two + "' holds 2 Weights & Biases run logs: " + two + "/run-a.wandb, " + two +
                                      "/run-b.wandb: name one");
  EXPECT_FALSE(is_wandb_file(kGolden + "/../tfevents/forms.tfevents"));
}

}  // namespace
}  // namespace lrkit::schedules
