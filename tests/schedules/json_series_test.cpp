// JSON logs as series: a Hugging Face Trainer's trainer_state.json (a file, an output or checkpoint directory) and
// JSON lines, and each refusal with its line.
#include "json_series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "lrkit/schedules/series_file.hpp"
#include "test_files.hpp"

namespace lrkit::schedules {
namespace {

using lrkit::testing::write_text;

// As transformers' TrainerState.save_to_json writes it: json.dumps(asdict(state), indent=2, sort_keys=True). Its
// log_history holds the training logs (every logging_steps), an evaluation's and the closing summary.
std::string trainer_state(int max_steps, const std::string& extra_entry = "") {
  return "{\n"
         "  \"best_global_step\": null,\n  \"best_metric\": null,\n  \"epoch\": 0.6,\n  \"eval_steps\": 20,\n"
         "  \"global_step\": 30,\n  \"is_world_process_zero\": true,\n"
         "  \"log_history\": [\n"
         "    {\n      \"epoch\": 0.2,\n      \"grad_norm\": 1.25,\n      \"learning_rate\": 5e-05,\n"
         "      \"loss\": 2.5,\n      \"step\": 10\n    },\n"
         "    {\n      \"epoch\": 0.4,\n      \"grad_norm\": 1.5,\n      \"learning_rate\": 4.522542485937369e-05,\n"
         "      \"loss\": 2.25,\n      \"step\": 20\n    },\n"
         "    {\n      \"epoch\": 0.4,\n      \"eval_loss\": 2.375,\n      \"eval_runtime\": 0.5,\n"
         "      \"step\": 20\n    },\n" +
         extra_entry +
         "    {\n      \"epoch\": 0.6,\n      \"grad_norm\": NaN,\n      \"learning_rate\": 3.272542485937369e-05,\n"
         "      \"loss\": 2.0,\n      \"step\": 30\n    }\n"
         "  ],\n  \"logging_steps\": 10,\n  \"max_steps\": " + std::to_string(max_steps) + ",\n"
         "  \"stateful_callbacks\": {\"TrainerControl\": {\"args\": {\"should_save\": true}}},\n"
         "  \"train_batch_size\": 8\n}\n";
}

std::string refusal_of(const std::string& path, const std::string& column, const std::string& steps = "step") {
  try {
    read_series_file(path, column, steps);
  } catch (const SeriesFileError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JsonSeries, ATrainersStateGivesItsLogHistorysRowsAndItsLength) {
  const std::string path = write_text("trainer_state.json", trainer_state(50));
  const Series lr = read_series_file(path, "/train/learning_rate", "/train/step");  // a Trainer's TensorBoard tag
  EXPECT_EQ(lr.steps, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(lr.values, (std::vector<double>{5e-05, 4.522542485937369e-05, 3.272542485937369e-05})) << "exactly";
  EXPECT_EQ(lr.run_steps, 50) << "max_steps";
  const Series norms = read_series_file(path, "grad_norm", "step");
  ASSERT_EQ(norms.values.size(), 3u);
  EXPECT_TRUE(std::isnan(norms.values[2])) << "Python's json writes a diverged norm as NaN";
  const Series eval = read_series_file(path, "eval_loss", "step");
  EXPECT_EQ(eval.steps, std::vector<double>{20}) << "the rows that hold the column, the others passed over";
  EXPECT_EQ(read_series_file(path, "loss", "").steps, (std::vector<double>{0, 1, 2})) << "no steps asked for";
}

TEST(JsonSeries, ATrainersOutputDirectoryIsReadFromItsStateOrItsNewestCheckpoint) {
  namespace fs = std::filesystem;
  const fs::path out = lrkit::testing::scratch_dir() / "hf_output";
  for (const char* checkpoint : {"checkpoint-20", "checkpoint-100", "checkpoint-30", "checkpoint-x"})
    fs::create_directories(out / checkpoint);
  fs::create_directories(lrkit::testing::scratch_dir() / "hf_bare");
  write_text("hf_output/checkpoint-20/trainer_state.json", trainer_state(40));
  write_text("hf_output/checkpoint-100/trainer_state.json", trainer_state(100));
  write_text("hf_output/checkpoint-30/trainer_state.json", trainer_state(30));
  write_text("hf_output/checkpoint-x/trainer_state.json", trainer_state(7));
  const Series newest = read_series_file(out.string(), "learning_rate", "step");
  EXPECT_EQ(newest.run_steps, 100) << "checkpoint-100, not -30";
  EXPECT_EQ(newest.source, (out / "checkpoint-100" / "trainer_state.json").string()) << "the file chosen";
  EXPECT_EQ(read_series_file(newest.source, "learning_rate", "step").source, "") << "a file stands for itself";
  EXPECT_EQ(read_series_file((out / "checkpoint-20").string(), "learning_rate", "step").run_steps, 40);
  write_text("hf_output/trainer_state.json", trainer_state(200));
  EXPECT_EQ(read_series_file(out.string(), "learning_rate", "step").run_steps, 200) << "save_state()'s, at the end";
  write_text("hf_bare/readme.txt", "nothing here\n");
  EXPECT_NE(refusal_of((lrkit::testing::scratch_dir() / "hf_bare").string(), "lr")
                .find("is a directory without a run log (log.h5), event files, a trainer_state.json, an MLflow "
                  "run's metrics or store (mlflow.db) or a W&B run log (.wandb): name a run directory"),
            std::string::npos);
}

TEST(JsonSeries, AResumedTrainersRowsReplaceTheOnesItLoggedAgain) {
  // A run resumed from checkpoint-20 after it had logged step 30: the resumed session logs 30 again.
  const std::string again = "    {\n      \"learning_rate\": 4e-05,\n      \"step\": 30\n    },\n"
                            "    {\n      \"learning_rate\": 4.5e-05,\n      \"step\": 20\n    },\n";
  const std::string path = write_text("resumed_state.json", trainer_state(50, again));
  const Series log = read_series_file(path, "learning_rate", "step", RepeatedSteps::Replace);
  EXPECT_EQ(log.steps, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(log.values[1], 4.5e-05);
  EXPECT_EQ(log.replaced, 2u);
  EXPECT_EQ(log.run_steps, 50) << "kept through the replacing";
  EXPECT_NE(refusal_of(path, "learning_rate").find("steps must increase strictly (row 4: 20 after 30)"),
            std::string::npos) << "a table's steps must increase";
}

TEST(JsonSeries, JsonLinesGiveTheirRowsThatHoldTheColumnAndLeaveOutALineCutByAKill) {
  const std::string lines = "{\"step\": 0, \"lr\": 0.001, \"loss\": 3.0}\n"
                            "{\"step\": 0, \"eval_loss\": 2.9}\n"
                            "\n"
                            "{\"global_step\": 5, \"lr\": 0.002}\n"
                            "{\"step\": 10, \"lr\": null}\n"
                            "{\"step\": 15, \"lr\": 1e999}\n";
  const Series s = read_series_file(write_text("log.jsonl", lines), "/train/lr", "/train/step");
  EXPECT_EQ(s.steps, (std::vector<double>{0, 5, 15})) << "global_step is a step; null is no value";
  EXPECT_EQ(s.values[1], 0.002);
  EXPECT_TRUE(std::isinf(s.values[2])) << "past double's range, as Python reads it";
  EXPECT_FALSE(s.last_line_cut);
  const Series cut = read_series_file(write_text("cut.jsonl", lines + "{\"step\": 20, \"lr\": 0.0"), "lr", "step");
  EXPECT_EQ(cut.steps.back(), 15);
  EXPECT_TRUE(cut.last_line_cut);
  EXPECT_EQ(read_series_file(write_text("one.json", "{\"step\": 3, \"lr\": 0.5}"), "lr", "step").steps,
            std::vector<double>{3}) << "one line, one row";
  // An array of records, as pandas' to_json(orient="records") writes one (on one line, or indented).
  const Series records = read_series_file(
      write_text("records.json", "[{\"step\":0,\"lr\":0.001},{\"step\":5,\"loss\":2.0},\n {\"step\":10,\"lr\":0.002}]"),
      "lr", "step");
  EXPECT_EQ(records.steps, (std::vector<double>{0, 10}));
  EXPECT_EQ(records.values, (std::vector<double>{0.001, 0.002}));
  EXPECT_EQ(read_series_file(write_text("bom.jsonl", "\xEF\xBB\xBF{\"step\": 1, \"lr\": 0.5}\n"), "lr", "step").steps,
            std::vector<double>{1});
}

TEST(JsonSeries, ARefusalNamesTheFileTheLineAndWhatIsWrong) {
  const auto refused = [&](const std::string& name, const std::string& text, const std::string& column) {
    return refusal_of(write_text(name, text), column);
  };
  const std::string dir = lrkit::testing::scratch_dir().string() + "/";
  EXPECT_EQ(refused("broken.json", "{\n  \"log_history\": [\n    {\"step\": 1,, \"lr\": 2}\n  ]\n}\n", "lr"),
            "'" + dir + "broken.json' line 3, column 16: not JSON: expected a member's name in double quotes");
  EXPECT_EQ(refused("truncated.json", trainer_state(50).substr(0, 200), "learning_rate"),
            "'" + dir +
                "truncated.json' line 11, column 13: not JSON: the text ends inside a string (a truncated file?)");
  EXPECT_EQ(refused("pretty.jsonl", "{\n  \"step\": 1,\n  \"lr\": 2\n}\n{\n  \"step\": 2,\n  \"lr\": 3\n}\n", "lr"),
            "'" + dir + "pretty.jsonl' line 5, column 1: not JSON: text after the object (a trainer_state.json is one "
            "object; JSON lines are one object a line)");
  EXPECT_EQ(refused("config.json", "{\n  \"lr\": 0.001,\n  \"step\": 3\n}\n", "lr"),
            "'" + dir + "config.json' is one JSON object without a log_history: not a Hugging Face trainer_state.json, "
            "nor JSON lines (an object per line)");
  EXPECT_EQ(refused("middle.jsonl", "{\"step\": 1, \"lr\": 2}\n{\"step\": 2, \"lr\": }\n{\"step\": 3, \"lr\": 4}\n",
                    "lr"),
            "'" + dir + "middle.jsonl' line 2, column 19: expected a value (a number, a string, an object, an array, "
            "true, false or null) (JSON lines: an object per line)");
  EXPECT_EQ(refused("text.jsonl", "{\"step\": 1, \"lr\": \"2e-4\"}\n", "lr"),
            "'" + dir + "text.jsonl' line 1: lr: the string \"2e-4\" is not a number");
  EXPECT_EQ(refused("nostep.jsonl", "{\"iter\": 1, \"lr\": 2}\n", "lr"),
            "'" + dir + "nostep.jsonl' line 1: it holds lr but no step ('step', 'Step', '_step', 'global_step' or "
            "'trainer/global_step')");
  EXPECT_EQ(refused("badstep.jsonl", "{\"step\": NaN, \"lr\": 2}\n", "lr"),
            "'" + dir + "badstep.jsonl' line 1: step: the step must be a finite number (it is NaN)");
  EXPECT_EQ(refused("entry.json", "{\"log_history\": [{\"step\": 1, \"lr\": 2},\n 3]}", "lr"),
            "'" + dir + "entry.json' log_history entry 2 (line 2): not a JSON object but '3'");
  EXPECT_EQ(refused("records.json", "[{\"step\": 1, \"lr\": 2},\n 7]", "lr"),
            "'" + dir + "records.json' element 2 (line 2): not a JSON object but '7'");
  EXPECT_EQ(refused("open.json", "[{\"step\": 1, \"lr\": 2},\n {\"step\"", "lr"),
            "'" + dir + "open.json' line 2, column 9: not JSON: the text ends inside the object (a truncated file?)");
  EXPECT_EQ(refused("history.json", "{\"max_steps\": 3,\n \"log_history\": {}}", "lr"),
            "'" + dir + "history.json' line 2, column 17: log_history is not an array (a Hugging Face "
            "trainer_state.json's is a list of logs)");
  EXPECT_EQ(refusal_of(write_text("trainer_state.json", trainer_state(50)), "/train/lr"),
            "'" + dir + "trainer_state.json': no entry of log_history holds 'train/lr' or 'lr' (they hold epoch, "
            "grad_norm, learning_rate, loss, step, eval_loss, eval_runtime)");
}

}  // namespace
}  // namespace lrkit::schedules
