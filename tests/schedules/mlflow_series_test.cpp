// MLflow's file store as series: a run's directory, a metric's file, resumes, a line cut by a kill, and refusals.
#include "mlflow_series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "lrkit/schedules/series_file.hpp"
#include "test_files.hpp"

namespace lrkit::schedules {
namespace {

using lrkit::testing::write_text;

// mlruns/1/RUN as MLflow's FileStore writes it: meta.yaml, and a file per metric of "%s %s %s\n" % (timestamp,
// value, step) lines (Hugging Face's MLflowCallback logs learning_rate, loss, grad_norm and epoch at the global step).
std::string mlflow_run(const std::string& run, const std::string& learning_rate) {
  namespace fs = std::filesystem;
  const fs::path dir = lrkit::testing::scratch_dir() / "mlruns" / "1" / run;
  fs::create_directories(dir / "metrics" / "train");
  fs::create_directories(dir / "params");
  write_text("mlruns/1/meta.yaml", "artifact_location: file:///tmp/mlruns/1\nexperiment_id: '1'\nname: lrkit\n");
  write_text("mlruns/1/" + run + "/meta.yaml", "run_id: " + run + "\nstatus: 3\n");
  write_text("mlruns/1/" + run + "/params/learning_rate", "5e-05");
  write_text("mlruns/1/" + run + "/params/max_steps", "200");  // a Trainer's TrainingArguments
  write_text("mlruns/1/" + run + "/metrics/learning_rate", learning_rate);
  write_text("mlruns/1/" + run + "/metrics/train/loss", "1764201600000 2.5 10\n1764201601000 nan 20\n");
  return dir.string();
}

TEST(MlflowSeries, ARunsMetricIsReadByItsNameFromTheRunOrItsFile) {
  const std::string run = mlflow_run("a1b2", "1764201600000 5e-05 10\n1764201601000 4.5e-05 20\n"
                                             "1764201602000 4e-05 30\n");
  const Series lr = read_series_file(run, "/train/learning_rate", "/train/step", RepeatedSteps::Replace);
  EXPECT_EQ(lr.steps, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(lr.values, (std::vector<double>{5e-05, 4.5e-05, 4e-05}));
  EXPECT_EQ(lr.source, run + "/metrics/learning_rate");
  EXPECT_FALSE(lr.last_line_cut);
  EXPECT_EQ(lr.run_steps, 200) << "its param max_steps";
  const Series loss = read_series_file(run, "/train/loss", "/train/step");
  EXPECT_EQ(loss.steps, (std::vector<double>{10, 20})) << "a name with '/' is a file in a subdirectory";
  EXPECT_TRUE(std::isnan(loss.values[1]));
  EXPECT_EQ(read_series_file(run + "/metrics/learning_rate", "ignored", "").values, lr.values) << "the file itself";
  EXPECT_TRUE(is_mlflow_run(run));
  EXPECT_FALSE(is_mlflow_run(run + "/metrics"));
  EXPECT_TRUE(is_mlflow_metric_file(run + "/metrics/train/loss"));
  EXPECT_FALSE(is_mlflow_metric_file(run + "/meta.yaml"));
}

TEST(MlflowSeries, AResumedRunsRowsReplaceAndALineCutByAKillIsLeftOut) {
  // Resumed from step 20's checkpoint after step 30 was logged; killed while appending.
  const std::string run = mlflow_run("c3d4", "1764201600000 5e-05 10\n1764201601000 4.5e-05 20\n"
                                             "1764201602000 4e-05 30\n1764201700000 4.4e-05 30\n1764201701000 4.3e-");
  const Series lr = read_series_file(run, "learning_rate", "step", RepeatedSteps::Replace);
  EXPECT_EQ(lr.steps, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(lr.values[2], 4.4e-05);
  EXPECT_EQ(lr.replaced, 1u);
  EXPECT_TRUE(lr.last_line_cut);
  write_text("mlruns/1/c3d4/params/max_steps", "-1");  // the epochs set the length: none recorded
  EXPECT_EQ(read_series_file(run, "learning_rate", "step", RepeatedSteps::Replace).run_steps, 0);
}

TEST(MlflowSeries, ARefusalNamesTheRunOrTheLine) {
  const auto refusal = [](const std::string& path, const std::string& column) -> std::string {
    try {
      read_series_file(path, column, "step", RepeatedSteps::Replace);
    } catch (const SeriesFileError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string run = mlflow_run("e5f6", "1764201600000 5e-05 10\n1764201601000 x 20\n");
  EXPECT_EQ(refusal(run, "lr"), "'" + run + "': the MLflow run has no metric 'lr' (its metrics: learning_rate, "
                                            "train/loss)");
  EXPECT_EQ(refusal(run, "learning_rate"),
            "'" + run + "/metrics/learning_rate' line 2: the value 'x' is not a number");
  write_text("mlruns/1/e5f6/metrics/learning_rate", "5e-05,10\n");
  EXPECT_EQ(refusal(run, "learning_rate"), "'" + run + "/metrics/learning_rate' line 1: '5e-05,10' is not an MLflow "
                                           "metric's line (TIMESTAMP VALUE STEP)");
  write_text("mlruns/1/e5f6/metrics/learning_rate", "1764201600000 5e-05 1.5e300x\n");
  EXPECT_EQ(refusal(run, "learning_rate"),
            "'" + run + "/metrics/learning_rate' line 1: the step '1.5e300x' is not a number");
  const std::string experiment = (lrkit::testing::scratch_dir() / "mlruns" / "1").string();
  const std::string listed = refusal(experiment, "learning_rate");  // this test's run, and the others' before it
  EXPECT_NE(listed.find("' is a directory without a run log (log.h5), event files, a trainer_state.json, an MLflow "
                        "run's metrics or store (mlflow.db) or a W&B run log (.wandb); the MLflow runs below it: "),
            std::string::npos)
      << listed;
  EXPECT_NE(listed.find(experiment + "/e5f6"), std::string::npos) << listed;
}

}  // namespace
}  // namespace lrkit::schedules
