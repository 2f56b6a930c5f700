// The run log's sessions: each session of a run (its fresh start, every resume) is recorded in /sessions/<i>, and
// the log's settings (/config, the command line, /start) describe the newest one.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/run_log.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

// Writes the rows of steps start.step..until-1 in a session of its own; returns what the session changed.
std::string write_steps(const TrainConfig& c, const RunStart& start, bool continues, int64_t until) {
  auto log = open_run_log(c, 1, start, continues);
  for (int64_t step = start.step; step < until; ++step) {
    StepRecord row;
    row.step = step;
    row.rank_loss = {1.0};
    row.rank_grad_norm = {1.0};
    log->record(row);
    log->end_step();
  }
  log->flush();
  return log->changed_settings();
}

RunStart resumed_at(int64_t step, const std::string& threads) {
  RunStart start;
  start.kind = "resume";
  start.checkpoint = "checkpoints/step_" + std::to_string(step) + ".pt";
  start.step = step;
  start.threads = threads;
  return start;
}

TEST(RunLog, EverySessionIsRecordedAndTheSettingsAreTheNewestSessions) {
  TrainConfig c = tiny_config();
  c.out = (lrkit::testing::scratch_dir() / "sessions").string();
  c.diagnostics.enabled = false;  // the rows below carry no dispersion
  c.command_line = "lrkit train --train.accumulation=1";
  c.train.accumulation = 1;
  RunStart fresh;
  fresh.threads = "2 intra-op";
  EXPECT_EQ(write_steps(c, fresh, false, 6), "");
  const std::string log = run_log_path(c.out);
  const std::string created = h5::read_string_attributes(log, "/").at("created_utc");
  auto first = h5::read_string_attributes(log, "/sessions/0");
  EXPECT_EQ(first.at("kind"), "fresh");
  EXPECT_EQ(first.at("step"), "0");
  EXPECT_EQ(first.at("threads"), "2 intra-op");
  EXPECT_EQ(first.at("command_line"), "lrkit train --train.accumulation=1");
  EXPECT_EQ(first.at("changed"), "");
  EXPECT_FALSE(first.at("started_utc").empty());

  // A resume with other ways of carrying the run out: /config and the command line are the new session's.
  TrainConfig resumed = c;
  resumed.command_line = "lrkit train --train.accumulation=2 --resume auto";
  resumed.train.accumulation = 2;
  resumed.checkpoint.every = 3;
  EXPECT_EQ(write_steps(resumed, resumed_at(4, "1 intra-op"), true, 8),
            "train.accumulation = 1 -> 2; checkpoint.every = " + std::to_string(c.checkpoint.every) + " -> 3");
  const auto second = h5::read_string_attributes(log, "/sessions/1");
  EXPECT_EQ(second.at("kind"), "resume");
  EXPECT_EQ(second.at("step"), "4");
  EXPECT_EQ(second.at("checkpoint"), "checkpoints/step_4.pt");
  EXPECT_EQ(second.at("threads"), "1 intra-op");
  EXPECT_EQ(second.at("command_line"), resumed.command_line);
  EXPECT_EQ(second.at("changed"),
            "train.accumulation = 1 -> 2; checkpoint.every = " + std::to_string(c.checkpoint.every) + " -> 3");
  EXPECT_EQ(h5::read_string_attributes(log, "/config").at("train.accumulation"), "2");
  const auto root = h5::read_string_attributes(log, "/");
  EXPECT_EQ(root.at("command_line"), resumed.command_line);
  EXPECT_EQ(root.at("created_utc"), created) << "when the run began stays";
  EXPECT_EQ(h5::read_string_attributes(log, "/start"), [&] {
    auto start = second;
    for (const char* own : {"started_utc", "lrkit_version", "command_line", "changed"}) start.erase(own);
    return start;
  }()) << "/start is the newest session's start";
  first = h5::read_string_attributes(log, "/sessions/0");
  EXPECT_EQ(first.at("command_line"), c.command_line) << "an earlier session's record stays as it was";

  // A resume from an earlier checkpoint rewrites the rows from its step on; the sessions that wrote the others stay.
  write_steps(resumed, resumed_at(2, "1 intra-op"), true, 5);
  const auto third = h5::read_string_attributes(log, "/sessions/2");
  EXPECT_EQ(third.at("step"), "2");
  EXPECT_EQ(third.at("changed"), "");
  EXPECT_EQ(h5::read_series(log, "/train/step"), (std::vector<double>{0, 1, 2, 3, 4}));
  EXPECT_FALSE(h5::has_dataset(log, "/sessions/3"));
}

}  // namespace
}  // namespace lrkit::train
