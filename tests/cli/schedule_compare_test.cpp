// `lrkit schedule SPEC --compare FILE` with the real binary: the verdict, the mistake named, exit codes and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "test_files.hpp"

namespace {

using lrkit::testing::run_lrkit;

// cosine(peak=1e-3, floor=1e-5, warmup=10) over `length` steps (100 by default), as the formula gives it.
double warm_cosine(int64_t t, int64_t length = 100) {
  if (t < 10) return 1e-3 * static_cast<double>(t) / 10.0;
  const double s = static_cast<double>(std::min<int64_t>(t, length) - 10) / static_cast<double>(length - 10);
  return 1e-5 + (1e-3 - 1e-5) * 0.5 * (1.0 + std::cos(M_PI * s));
}
const std::string kSpec = "'cosine(peak=1e-3, floor=1e-5, warmup=10)'";

// A CSV a training loop wrote: the rate of each of 100 updates, as `rate(step)` gives it.
template <class Rate>
std::string csv_log(const std::string& name, Rate rate) {
  std::string text = "step,lr\n";
  for (int64_t t = 0; t < 100; ++t) text += std::to_string(t) + "," + lrkit::format_number(rate(t)) + "\n";
  return lrkit::testing::write_text(name, text);
}

// Each `lrkit schedule ARGS` exits 2 with one line that begins with its message.
void expect_one_line_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& [args, message] : cases) {
    const auto r = run_lrkit("schedule " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.find(message), 0u) << args << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << args << "\n" << r.out;
  }
}

TEST(ScheduleCompare, ALogThatFollowsTheSpecExitsZero) {
  const auto file = csv_log("compare_follows.csv", [](int64_t t) { return warm_cosine(t); });
  const auto r = run_lrkit("schedule " + kSpec + " --compare " + file);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find(file + ": 100 rows of /train/lr, steps 0..99, against cosine(peak=0.001, floor=1e-05, "
                              "warmup=10) (100 steps: the log's last step + 1; --steps gives the run's)\n"
                              "follows it: the worst relative difference is "),
            0u)
      << r.out;
}

TEST(ScheduleCompare, ADifferenceNamesItsFirstStepAndTheMistakeThatExplainsIt) {
  const auto ahead = csv_log("compare_ahead.csv", [](int64_t t) { return warm_cosine(t + 1); });
  auto r = run_lrkit("schedule " + kSpec + " --compare " + ahead + " --steps 100");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("(100 steps)\ndiffers from step 0 (logged 0.0001, schedule 0: 1 relative), the worst "
                       "(tolerance 1e-06)\nthe log is the schedule read 1 step ahead: update t ran at its rate of step "
                       "t + 1 (a loop that calls scheduler.step() before optimizer.step() reads 1 ahead)\n"),
            std::string::npos)
      << r.out;
  const auto accumulated = csv_log("compare_faster.csv", [](int64_t t) { return warm_cosine(8 * t); });
  r = run_lrkit("schedule " + kSpec + " --compare " + accumulated + " --steps 100");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("the log runs the schedule 8 times as fast"), std::string::npos) << r.out;
  const auto other =
      csv_log("compare_other.csv", [](int64_t t) { return 1e-3 * (1.0 - static_cast<double>(t) / 100); });
  r = run_lrkit("schedule " + kSpec + " --compare " + other + " --steps 100");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.out.find("\nno single loop mistake explains it"), std::string::npos) << r.out;
}

// A scheduler given 250 steps for a run of 100 (its length counted in micro-batches), and a run resumed at update 60
// with its length raised from 100 to 150: both lengths are named, in words and in JSON.
TEST(ScheduleCompare, ARunLengthGivenWrongOrChangedAtAResumeIsNamed) {
  const auto longer = csv_log("compare_longer.csv", [](int64_t t) { return warm_cosine(t, 250); });
  auto r = run_lrkit("schedule " + kSpec + " --compare " + longer);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("(100 steps: the log's last step + 1; --steps gives the run's)\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nthe log follows the schedule built for 250 steps instead of 100 (2.5 times as long): its "
                       "warmup, decay and end lie where a run of that length has them"),
            std::string::npos)
      << r.out;
  std::string text = "step,lr\n";
  for (int64_t t = 0; t < 150; ++t)
    text += std::to_string(t) + "," + lrkit::format_number(warm_cosine(t, t < 60 ? 100 : 150)) + "\n";
  const auto changed = lrkit::testing::write_text("compare_changed.csv", text);
  r = run_lrkit("schedule " + kSpec + " --compare " + changed + " --steps 150 --format json");
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* expected :
       {"\"mistake\": \"length_changed\", \"amount\": 100, \"restarts\": [], \"other_length\": null, "
        "\"other_length_last\": null, \"left_end_value_at\": null, \"length_change\": {\"before\": 100, "
        "\"after\": 150, \"last_step_before\": 59, \"first_step_after\": 60}, \"setting\": null, \"explanation\": "
        "\"the run's length changed after step 59: "})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  r = run_lrkit("schedule " + kSpec + " --compare " + longer + " --format json");
  EXPECT_NE(r.out.find("\"mistake\": \"other_length\", \"amount\": 250, \"restarts\": [], \"other_length\": 250, "
                       "\"other_length_last\": 250, \"left_end_value_at\": null, \"length_change\": null, "),
            std::string::npos)
      << r.out;
}

// A loop whose scheduler was given a warmup of 25 steps where the spec has 10: the setting, both values and the spec
// the log follows, in words and in JSON.
TEST(ScheduleCompare, AnotherNumberOfTheSpecIsNamed) {
  const auto path = (lrkit::testing::scratch_dir() / "compare_warmup.csv").string();
  ASSERT_EQ(run_lrkit("schedule 'cosine(peak=1e-3, floor=1e-5, warmup=25)' --steps 100 --out " + path).code, 0);
  auto r = run_lrkit("schedule " + kSpec + " --compare " + path + " --steps 100");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\nthe log follows cosine(peak=0.001, floor=1e-05, warmup=25): the spec with warmup=25 instead "
                       "of 10 (a scheduler given another value)\n"),
            std::string::npos)
      << r.out;
  r = run_lrkit("schedule " + kSpec + " --compare " + path + " --steps 100 --format json");
  EXPECT_NE(r.out.find("\"mistake\": \"other_setting\", \"amount\": 0, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\"setting\": {\"name\": \"warmup\", \"given\": \"10\", \"value\": \"25\", \"spec\": "
                       "\"cosine(peak=0.001, floor=1e-05, warmup=25)\", \"lowest\": \"25\", \"highest\": \"25\", "
                       "\"highest_is_last\": false}, "),
            std::string::npos)
      << r.out;
}

// An HDF5 log whose loop rebuilt its scheduler at a resume; the JSON verdict names the restart.
TEST(ScheduleCompare, ARestartInAnHdf5LogIsNamedInJson) {
  const auto path = (lrkit::testing::scratch_dir() / "compare_restart.h5").string();
  {
    std::vector<double> steps, rates;
    for (int64_t t = 0; t < 100; ++t) {
      steps.push_back(static_cast<double>(t));
      rates.push_back(warm_cosine(t < 50 ? t : t - 50));
    }
    lrkit::h5::Writer w(path);
    w.write_series("/train/step", steps);
    w.write_series("/train/lr", rates);
  }
  const auto r = run_lrkit("schedule " + kSpec + " --compare " + path + " --steps 100 --format json");
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* expected : {"\"rows\": 100", "\"follows\": false", "\"first_difference\": {\"step\": 50, ",
                               "\"mistake\": \"restarted\"", "\"restarts\": [50]",
                               "\"explanation\": \"the schedule started over at step 50 (a resume that built a new "
                               "scheduler without loading its state)\"}\n"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

// A table `lrkit schedule --out` wrote is its spec's, read through --column.
TEST(ScheduleCompare, ATableFileFollowsItsSpecThroughColumn) {
  const auto path = (lrkit::testing::scratch_dir() / "compare_table.h5").string();
  ASSERT_EQ(run_lrkit("schedule 'wsd(peak=1e-3, warmup=5)' --steps 50 --out " + path).code, 0);
  // Its last row is the end value, at step 50 of 50: the log's last step + 1 would be one too many.
  auto r = run_lrkit("schedule 'wsd(peak=1e-3, warmup=5)' --compare " + path + " --column /schedule/lr --steps 50");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("51 rows of /schedule/lr, steps 0..50"), std::string::npos) << r.out;
  r = run_lrkit("schedule 'wsd(peak=1e-3, warmup=5)' --compare " + path + " --column /schedule/lr --steps 50 "
                "--tolerance 0");
  EXPECT_EQ(r.code, 0) << r.out;  // the same arithmetic: equal bit for bit
}

// TensorBoard logs (tests/golden/make_tfevents.py): a Hugging Face Trainer run resumed from a checkpoint, and a
// plain loop that rebuilt its scheduler when it resumed with SummaryWriter(purge_step=40).
TEST(ScheduleCompare, TensorBoardLogsAreComparedAsTensorBoardShowsThem) {
  const std::string golden = std::string(LRKIT_GOLDEN_DIR) + "/tfevents/";
  auto r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --steps 200 --compare " + golden +
                     "hf_resumed --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find(golden + "hf_resumed: 20 rows of train/learning_rate, steps 10..200 (5 rows replaced by a "
                                "resumed session's), against cosine(peak=0.0005, warmup=20) (200 steps)\nfollows it"),
            0u)
      << r.out;
  r = run_lrkit("schedule 'cosine(peak=0.1, warmup=10)' --steps 80 --compare " + golden +
                "restarted --column lr -f json");
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* expected : {"\"rows\": 80", "\"replaced_rows\": 20", "\"mistake\": \"restarted\"",
                               "\"restarts\": [40]"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  // The Trainer run resumed from checkpoint-100 with max_steps raised from 200 to 300 (float32 rates, every 10th
  // step): either length's spec names both, and the rows on either side of the change.
  for (const char* steps : {"200", "300"}) {
    r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --steps " + std::string(steps) + " --compare " + golden +
                  "hf_extended --column train/learning_rate");
    EXPECT_EQ(r.code, 1) << r.out;
    EXPECT_NE(r.out.find("\nthe run's length changed after step 100: the rows up to it follow the schedule built for "
                         "200 steps, those from step 110 on the one built for 300 (a resume with another run length"),
              std::string::npos)
        << steps << "\n" << r.out;
  }
  // Without --column, the default /train/lr is no tag of this log: the error lists the tags there are.
  r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --compare " + golden + "hf_cosine");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find(": no scalar tag 'train/lr'; its scalar tags: train/epoch, train/grad_norm, "
                       "train/learning_rate, train/loss, train/train_runtime\n"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << r.out;
}

// A loop's CSV appended across a resume from update 60's checkpoint at update 40 (its scheduler rebuilt there): the
// resumed session's rows replace the first's from 40 on, and the restart is named.
TEST(ScheduleCompare, AnAppendedCsvOfAResumedRunIsReadAsTheRunTrained) {
  std::string text = "step,lr\n";
  for (int64_t t = 0; t < 60; ++t) text += std::to_string(t) + "," + lrkit::format_number(warm_cosine(t)) + "\n";
  for (int64_t t = 40; t < 100; ++t) text += std::to_string(t) + "," + lrkit::format_number(warm_cosine(t - 40)) + "\n";
  const auto file = lrkit::testing::write_text("compare_appended.csv", text);
  const auto r = run_lrkit("schedule " + kSpec + " --compare " + file + " --steps 100");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out.find(file + ": 100 rows of /train/lr, steps 0..99 (20 rows replaced by a resumed session's), "),
            0u)
      << r.out;
  EXPECT_NE(r.out.find("\nthe schedule started over at step 40 (a resume that built a new scheduler without loading "
                       "its state)\n"),
            std::string::npos)
      << r.out;
}

// `lrkit schedule --fit FILE`: the spec a Trainer's TensorBoard run followed (float32 rates every 10 steps, resumed
// once), one a CSV's rows follow in JSON, and a log of no family tried, with the closest.
TEST(ScheduleFit, ALogsSpecIsFoundWithoutOne) {
  const std::string golden = std::string(LRKIT_GOLDEN_DIR) + "/tfevents/";
  auto r = run_lrkit("schedule --fit " + golden + "hf_resumed --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, golden + "hf_resumed: 20 rows of train/learning_rate, steps 10..200 (5 rows replaced by a resumed "
                            "session's)\nfits cosine(peak=0.0005, warmup=20) over 200 steps: the worst relative "
                            "difference is 4.74974494622458e-08 at step 140 (tolerance 1e-06)\n");
  // A spec's table over `steps` steps, written to scratch as `name`: its path.
  const auto table_of = [](const std::string& spec, int steps, const std::string& name) {
    const auto file = (lrkit::testing::scratch_dir() / name).string();
    EXPECT_EQ(run_lrkit("schedule '" + spec + "' --steps " + std::to_string(steps) + " --out " + file).code, 0) << spec;
    return file;
  };
  const auto path = table_of("wsd(peak=1e-3, warmup=50, decay=10%, shape=linear)", 1000, "fit_wsd.csv");
  r = run_lrkit("schedule --fit " + path + " --format json");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\"rows\": 1001, \"first_step\": 0, \"last_step\": 1000, \"replaced_rows\": 0, \"fits\": true, "
                       "\"spec\": \"wsd(peak=0.001, decay=10%, shape=linear, warmup=50)\", \"steps\": 1000, "),
            std::string::npos)
      << r.out;
  // A family read from the log's climbs (CyclicLR's floor and rise from step 0, its fall to the row before a climb).
  r = run_lrkit("schedule --fit " + table_of("triangular(peak=0.1, floor=0.01, up=20, down=30)", 700,
                                               "fit_triangular.csv"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\nfits triangular(peak=0.1, floor=0.01, up=20, down=30) over 701 steps: "), std::string::npos)
      << r.out;
  r = run_lrkit("schedule --fit " + table_of("infinite(peak=1e-3, const=5e-4, warmup=20)", 500, "fit_infinite.csv"));
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("\nno spec of the families --fit tries (lrkit schedule --help), from the numbers the log shows "
                       "and one found, fits it; the closest, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("; the run's length was taken as the last step or the last step + 1: --steps gives it\n"),
            std::string::npos)
      << r.out;
  expect_one_line_errors({
      {"'cosine(peak=1e-3)' --fit " + path,
       "lrkit schedule: --fit finds the spec itself: drop SPEC 'cosine(peak=1e-3)' (--compare checks a log against "
       "one)"},
      {"--fit " + path + " --compare " + path, "lrkit schedule: --fit prints its verdict alone: drop --compare"},
      {"--fit " + path + " --at 3", "lrkit schedule: --fit prints its verdict alone: drop --at"},
      {"--fit /nonexistent/log.csv", "lrkit schedule: --fit: '/nonexistent/log.csv' does not exist or cannot be reached"},
  });
}

// A Hugging Face Trainer's checkpoint-100/trainer_state.json of a run of `max_steps` (0: none written) that follows
// cosine(peak=5e-4, warmup=20) over 200 steps, logged every 10th step to step 100 beside its losses and an evaluation:
// the directory's path.
std::string trainer_checkpoint(const std::string& name, int max_steps) {
  std::string history;
  for (int64_t t = 10; t <= 100; t += 10) {
    const double rate = t < 20 ? 5e-4 * static_cast<double>(t) / 20.0
                               : 5e-4 * 0.5 * (1.0 + std::cos(M_PI * static_cast<double>(t - 20) / 180.0));
    history += std::string(t == 10 ? "" : ",\n") + "    {\n      \"epoch\": " +
               std::to_string(static_cast<double>(t) / 100.0) + ",\n      \"grad_norm\": 1.5,\n" +
               "      \"learning_rate\": " + lrkit::format_number(rate) +
               ",\n      \"loss\": 2.0,\n      \"step\": " + std::to_string(t) + "\n    }";
    if (t == 50) history += ",\n    {\n      \"eval_loss\": 2.5,\n      \"step\": 50\n    }";
  }
  const std::string dir = name + "/checkpoint-100";
  std::filesystem::create_directories(lrkit::testing::scratch_dir() / dir);
  lrkit::testing::write_text(dir + "/trainer_state.json",
                             "{\n  \"global_step\": 100,\n  \"log_history\": [\n" + history + "\n  ],\n" +
                                 (max_steps ? "  \"max_steps\": " + std::to_string(max_steps) + ",\n" : "") +
                                 "  \"train_batch_size\": 8\n}\n");
  return (lrkit::testing::scratch_dir() / name).string();
}

TEST(ScheduleFit, ATrainersCheckpointIsReadWithItsRunsLength) {
  const std::string out = trainer_checkpoint("hf_out", 200);
  auto r = run_lrkit("schedule --fit " + out + " --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, out + " (" + out + "/checkpoint-100/trainer_state.json): 10 rows of train/learning_rate, steps "
                         "10..100, of a run of 200 steps (its max_steps)\n"
                         "fits cosine(peak=0.0005, warmup=20) over 200 steps: the worst relative difference is "
                         "3.6951522376689273e-16 at step 100 (tolerance 1e-06)\n");
  r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --compare " + out + " --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find(", against cosine(peak=0.0005, warmup=20) (200 steps: the log's max_steps; --steps gives "
                       "another)\nfollows it"),
            std::string::npos)
      << r.out;
  r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --compare " + out +
                " --column train/learning_rate --steps 300 --format json");
  EXPECT_EQ(r.code, 1) << "--steps over max_steps: " << r.out;
  EXPECT_NE(r.out.find("\"spec\": \"cosine(peak=0.0005, warmup=20)\", \"steps\": 300, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", \"tolerance\": 1e-06, \"run_steps\": 200, \"last_line_cut\": false, "), std::string::npos)
      << r.out;
  // Without max_steps, --compare takes the log's last step + 1 as the run's length, and finds the run's own.
  r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --compare " + trainer_checkpoint("hf_out_no_length", 0) +
                " --column train/learning_rate");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("(101 steps: the log's last step + 1; --steps gives the run's)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("the log follows the schedule built for 200 steps instead of 101"), std::string::npos) << r.out;
}

TEST(ScheduleFit, AWandbRunIsReadAtItsStepMetricWithItsMaxSteps) {
  // make_wandb.py's Trainer run, reported to W&B: the rows at train/global_step, max_steps from the config.
  const std::string run = std::string(LRKIT_GOLDEN_DIR) + "/wandb/hf_output/wandb/run-20261127_000000-lrkhf001";
  auto r = run_lrkit("schedule --fit " + run + " --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
            run + " (" + run + "/run-lrkhf001.wandb): 20 rows of train/learning_rate, steps 10..200, of a run of 200 "
                  "steps (its max_steps)");
  EXPECT_NE(r.out.find("fits cosine(peak=0.0005, warmup=20) over 200 steps: "), std::string::npos) << r.out;
  r = run_lrkit("schedule 'cosine(peak=5e-4, warmup=20)' --compare " + run + " --column train/learning_rate");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("\nfollows it"), std::string::npos) << r.out;
}

TEST(ScheduleCompare, BadInputIsAOneLineError) {
  const auto follows = csv_log("compare_ok.csv", [](int64_t t) { return warm_cosine(t); });
  const auto nan_row = lrkit::testing::write_text("compare_nan.csv", "step,lr\n0,0\n1,nan\n");
  // A step far below 0 once became the run's length through a cast out of range.
  const auto negative = lrkit::testing::write_text("compare_negative.csv", "step,lr\n-1e300,0.1\n");
  std::vector<std::pair<std::string, std::string>> cases = {
      {"--compare /nonexistent/log.csv",
       "lrkit schedule: --compare: '/nonexistent/log.csv' does not exist or cannot be reached"},
      {"--compare " + follows + " --column loss", "lrkit schedule: --compare: '" + follows +
                                                      "' line 1: no column named 'loss' in the header"},
      {"--compare " + nan_row + " --steps 100",
       "lrkit schedule: --compare: '" + nan_row + "' row 2 (step 1): the rate nan is not finite"},
      {"--compare " + negative,
       "lrkit schedule: --compare: '" + negative +
           "' row 1: step -1e+300 is not a whole number of updates from 0 to 1e15"},
      {"--compare " + follows + " --tolerance -1", "lrkit schedule: --tolerance must be a finite number >= 0 (got -1)"},
      {"--compare " + follows + " --at 3", "lrkit schedule: --compare prints its verdict alone: drop --at"},
      {"--column /train/lr", "lrkit schedule: --column goes with --compare"},
      {"--tolerance 1e-3", "lrkit schedule: --tolerance goes with --compare"},
  };
  for (auto& [args, message] : cases) args = kSpec + " " + args;
  expect_one_line_errors(cases);
}

}  // namespace
