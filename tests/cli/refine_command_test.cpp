// `lrkit refine`: a finished run's gradient norms become the next run's schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace {

using lrkit::testing::out_dir;
using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;

TEST(RefineCommand, TheRefinedTableTrainsTheNextRun) {
  const auto first = out_dir("refine_first"), second = out_dir("refine_second");
  auto r = run_lrkit("train --config " + tiny_config() + " --out " + first);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string table = first + "/refined.h5";
  r = run_lrkit("refine " + first + "/log.h5 --peak 5e-3 --out " + table);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto spec_at = r.out.find("schedule.spec = ");
  ASSERT_NE(spec_at, std::string::npos) << r.out;
  const std::string spec = r.out.substr(spec_at + 16, r.out.find('\n', spec_at) - spec_at - 16);
  const auto lr = lrkit::h5::read_series(table, "/schedule/lr");
  ASSERT_EQ(lr.size(), 13u);  // steps 0..12 of a 12-step run
  EXPECT_DOUBLE_EQ(*std::max_element(lr.begin(), lr.end()), 5e-3);
  EXPECT_EQ(lr.back(), 0.0) << "refined schedules end at 0";
  r = run_lrkit("train --config " + tiny_config() + " --schedule.spec=\"" + spec + "\" --out " + second);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto used = lrkit::h5::read_series(second + "/log.h5", "/train/lr");
  for (size_t t = 0; t < used.size(); ++t) EXPECT_NEAR(used[t], lr[t], 1e-15) << t;
  r = run_lrkit("refine " + first + " --peak 5e-3 --norm l2 --steps 40 --out " + first + "/refined.csv");  // the run directory
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("table(file=" + first + "/refined.csv)"), std::string::npos) << r.out;
}

// A run that skipped updates (train.nonfinite=skip) logged their non-finite norms; a diverged run ends with one. The
// refinement fills them in from their neighbours (it refused the whole log) and says how many it filled.
TEST(RefineCommand, ARunThatSkippedUpdatesRefinesWithTheirNormsFilledIn) {
  const auto dir = out_dir("refine_skipped");
  std::filesystem::create_directories(dir);
  const auto write_log = [&](const std::string& name, const std::vector<double>& norms) {
    lrkit::h5::Writer writer(dir + "/" + name);
    std::vector<double> steps(norms.size());
    for (size_t i = 0; i < steps.size(); ++i) steps[i] = static_cast<double>(i);
    writer.write_series("/train/step", steps);
    writer.write_series("/train/grad_norm_l1", norms);
  };
  write_log("skipped.h5", {6, NAN, 4, 3, HUGE_VAL, 1, NAN});
  write_log("filled.h5", {6, 5, 4, 3, 2, 1, 1});
  auto r = run_lrkit("refine " + dir + "/skipped.h5 --peak 1e-3 --tau 0 --out " + dir + "/skipped.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("refined 7 steps from " + dir + "/skipped.h5 (l1 norms; 3 of 7 not finite, skipped updates: "
                       "filled in from their neighbours)\n"), std::string::npos) << r.out;
  r = run_lrkit("refine " + dir + "/filled.h5 --peak 1e-3 --tau 0 --out " + dir + "/filled.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("(l1 norms)\n"), std::string::npos) << r.out;
  EXPECT_EQ(run_command("cat " + dir + "/skipped.csv").out, run_command("cat " + dir + "/filled.csv").out);
  write_log("none.h5", {NAN, NAN});
  r = run_lrkit("refine " + dir + "/none.h5 --peak 1e-3 --out " + dir + "/none.csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("no gradient norm of the 2 is finite: every update of that run was skipped or diverged"),
            std::string::npos) << r.out;
}

// `lrkit refine RUN --peak 5e-4 --norm l2 OPTIONS --out DIR/refined.csv` refines `steps` steps, and its table is what
// the spec refined(norms=RUN) gives over them, row for row.
void expect_refined_as_the_spec_reads_it(const std::string& run, const std::string& dir, const std::string& options,
                                         int steps) {
  const auto r = run_lrkit("refine " + run + " --peak 5e-4 --norm l2" + options + " --out " + dir + "/refined.csv");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("refined " + std::to_string(steps) + " steps from " + run + " (l2 norms)\n"), std::string::npos)
      << r.out;
  const std::string length = " --steps " + std::to_string(steps) + " --format csv";
  const auto table = run_lrkit("schedule 'table(file=" + dir + "/refined.csv)'" + length);
  const auto spec = run_lrkit("schedule 'refined(norms=" + run + ", peak=5e-4, norm=l2)'" + length);
  ASSERT_EQ(spec.code, 0) << spec.out;
  EXPECT_EQ(table.out, spec.out);
}

// A Hugging Face Trainer's TensorBoard run (tests/golden/make_tfevents.py): --norm l2 reads its train/grad_norm. It
// logged every 10th of 200 steps, so the next run's length is asked for rather than guessed.
TEST(RefineCommand, ATrainersTensorBoardRunRefinesOnceItsLengthIsGiven) {
  const std::string run = std::string(LRKIT_GOLDEN_DIR) + "/tfevents/hf_cosine";
  const auto dir = out_dir("refine_tensorboard");
  std::filesystem::create_directories(dir);
  auto r = run_lrkit("refine " + run + " --peak 5e-4 --norm l2 --out " + dir + "/refined.csv");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "lrkit refine: '" + run + "' holds 20 gradient norms at steps 10..200, not one per step: give the "
                   "next run's length with --steps\n");
  expect_refined_as_the_spec_reads_it(run, dir, " --steps 200", 200);
}

// A Trainer's checkpoint: its trainer_state.json's max_steps is the length, so its norms of every 10th step refine
// without --steps, to the same schedule as the spec that reads them over max_steps.
TEST(RefineCommand, ATrainersCheckpointRefinesOverItsMaxSteps) {
  const auto dir = out_dir("refine_trainer_state");
  std::filesystem::create_directories(dir + "/checkpoint-60");
  std::ostringstream history;
  for (int step = 10; step <= 60; step += 10)
    history << (step == 10 ? "" : ",\n") << "    {\"grad_norm\": " << 1.0 + 0.25 * std::sin(step)
            << ", \"learning_rate\": 0.0005, \"step\": " << step << "}";
  std::ofstream(dir + "/checkpoint-60/trainer_state.json")
      << "{\n  \"log_history\": [\n" << history.str() << "\n  ],\n  \"max_steps\": 120\n}\n";
  expect_refined_as_the_spec_reads_it(dir, dir, "", 120);
}

TEST(RefineCommand, PathsWithSpacesCommasAndBracketsAreQuotedInTheSpecs) {
  const auto dir = out_dir("refine run (2), copy");
  std::filesystem::create_directories(dir);
  const auto log = dir + "/log.h5";
  {
    lrkit::h5::Writer writer(log);
    writer.write_series("/train/step", std::vector<double>{0, 1, 2, 3, 4, 5});
    writer.write_series("/train/grad_norm_l1", std::vector<double>{6, 5, 4, 3, 2, 1});
  }
  const std::string table = dir + "/refined table.h5";
  auto r = run_lrkit("refine '" + log + "' --peak 1e-3 --out '" + table + "'");
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string quoted = "table(file=\"" + table + "\", column=/schedule/lr, steps=/schedule/step)";
  EXPECT_NE(r.out.find("schedule.spec = " + quoted + "\n"), std::string::npos) << r.out;
  r = run_lrkit("schedule '" + quoted + "' --steps 6 --format csv");
  ASSERT_EQ(r.code, 0) << r.out;
  const auto lr = lrkit::h5::read_series(table, "/schedule/lr");
  ASSERT_EQ(lr.size(), 7u);
  std::istringstream rows(r.out);
  std::string row;
  std::getline(rows, row);  // the header
  for (size_t t = 0; t < lr.size(); ++t) {
    ASSERT_TRUE(std::getline(rows, row)) << r.out;
    EXPECT_EQ(std::stod(row.substr(row.find(',') + 1)), lr[t]) << "the printed spec reads the table, step " << t;
  }
}

TEST(RefineCommand, BadInputExitsTwoWithOneLine) {
  const std::string log = out_dir("refine_bad") + "/missing.h5";
  for (const auto& [args, needle] : std::vector<std::pair<std::string, std::string>>{
           {"refine " + log + " --peak 1e-3 --out x.h5", "missing.h5"},
           {"refine " + log + " --out x.h5", "--peak is required"},
           {"refine " + log + " --peak 1e-3", "--out FILE is required"},
           {"refine " + log + " --peak 1e-3 --out x.txt", "must end in .h5 (HDF5), .csv or .tsv"},
           {"refine " + log + " --peak 1e-3 --norm l3 --out x.h5", "--norm must be l1 or l2"},
           {"refine " + log + " --peek 1e-3 --out x.h5", "unrecognised option '--peek'; did you mean --peak? (see lrkit refine --help)"},
       }) {
    const auto r = run_lrkit(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(needle), std::string::npos) << args << "\n" << r.out;
  }
}

}  // namespace

TEST(RefineCommand, RefusesToWriteIntoItsOwnInput) {
  const auto dir = out_dir("refine_self");
  std::filesystem::create_directories(dir);
  const auto log = dir + "/log.h5";
  {
    lrkit::h5::Writer writer(log);
    writer.write_series("/train/step", std::vector<double>{0, 1, 2, 3});
    writer.write_series("/train/grad_norm_l1", std::vector<double>{4, 3, 2, 1});
  }
  const auto r = run_lrkit("refine " + log + " --peak 1e-3 --out " + dir + "/../refine_self/log.h5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("is the run log itself"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(log, "/train/grad_norm_l1").size(), 4u) << "the input is untouched";
}
