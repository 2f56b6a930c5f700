// MLflow's database store (mlflow.db) as series: a run's metric by the database, its directory or DATABASE/RUN;
// NaN and infinities as MLflow stores them; a resumed run; several runs; and refusals. The stores are written with
// MLflow's schema (tests/golden/mlflow/schema.sql) through SQLite's C API.
#include "mlflow_database.hpp"

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lrkit/schedules/series_file.hpp"
#include "test_files.hpp"

#ifdef LRKIT_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace lrkit::schedules {
namespace {

std::string refusal(const std::string& path, const std::string& column,
                    RepeatedSteps repeated = RepeatedSteps::Replace) {
  try {
    read_series_file(path, column, "step", repeated);
  } catch (const SeriesFileError& e) {
    return e.what();
  }
  return "no error";
}

// A file that starts as SQLite's do, and is none: read, it is refused with what SQLite says, or, in a build without
// SQLite, with what to install.
TEST(MlflowDatabase, AFileWithSqlitesHeaderIsReadAsADatabaseOrRefusedSayingWhy) {
  const std::string damaged = lrkit::testing::write_bytes("damaged/mlflow.db", std::string("SQLite format 3\0", 16) +
                                                                                   std::string(84, 'x'));
  EXPECT_TRUE(is_sqlite_file(damaged));
  EXPECT_FALSE(is_sqlite_file(lrkit::testing::write_text("not_sqlite.csv", "step,lr\n0,1\n")));
  const std::string why = refusal(damaged, "learning_rate");
#ifdef LRKIT_HAVE_SQLITE
  EXPECT_EQ(why.rfind("'" + damaged + "': reading it as an MLflow store: ", 0), 0u) << why;
#else
  EXPECT_EQ(why, "'" + damaged + "' is an SQLite database (an MLflow store?), and this lrkit was built without "
                                 "SQLite: install its headers (Debian/Ubuntu: libsqlite3-dev) and build again");
#endif
  // The directory holding it stands for it; a path through it names a run in it.
  EXPECT_EQ(refusal((lrkit::testing::scratch_dir() / "damaged").string(), "learning_rate"), why);
  EXPECT_EQ(mlflow_database_path(damaged + "/a1b2")->run, "a1b2");
  EXPECT_EQ(mlflow_database_path(damaged + "/a1b2")->database, damaged);
  EXPECT_FALSE(mlflow_database_path(damaged + "x/a1b2"));
  EXPECT_FALSE(mlflow_database_path(lrkit::testing::write_text("plain.csv", "step,lr\n0,1\n") + "/a1b2"));
}

#ifdef LRKIT_HAVE_SQLITE

std::string schema() {
  std::ifstream in(std::string(LRKIT_GOLDEN_DIR) + "/mlflow/schema.sql");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// An MLflow store written as MLflow's SQLAlchemy store writes one: its schema, an experiment, runs, and a row per
// logged metric value (a NaN as 0 with is_nan, an infinity as the largest double of its sign).
class Store {
 public:
  explicit Store(const std::string& directory)
      : path_((lrkit::testing::scratch_dir() / directory / "mlflow.db").string()) {
    std::filesystem::create_directories(std::filesystem::path(path_).parent_path());
    EXPECT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    run_sql(schema());
    run_sql("INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', 1764201600000, "
            "1764201600000); INSERT INTO experiments VALUES (1, 'lrkit', 'mlflow-artifacts:/1', 'active', "
            "1764201600000, 1764201600000);");
  }
  ~Store() { sqlite3_close(db_); }
  const std::string& path() const { return path_; }
  std::string directory() const { return std::filesystem::path(path_).parent_path().string(); }

  void run(const std::string& id, const std::string& name, int64_t started_ms, const std::string& stage = "active") {
    run_sql("INSERT INTO runs (run_uuid, name, source_type, status, start_time, lifecycle_stage, experiment_id) "
            "VALUES ('" + id + "', '" + name + "', 'LOCAL', 'FINISHED', " + std::to_string(started_ms) + ", '" +
            stage + "', 1)");
  }
  void log(const std::string& run, const std::string& key, double value, int64_t step, int64_t timestamp) {
    const bool is_nan = std::isnan(value);
    const double stored = is_nan ? 0.0 : std::isinf(value) ? std::copysign(DBL_MAX, value) : value;
    sqlite3_stmt* insert = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(db_, "INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)", -1, &insert, nullptr),
              SQLITE_OK);
    sqlite3_bind_text(insert, 1, key.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_double(insert, 2, stored);
    sqlite3_bind_int64(insert, 3, timestamp);
    sqlite3_bind_text(insert, 4, run.c_str(), -1, SQLITE_TRANSIENT);
    sqlite3_bind_int64(insert, 5, step);
    sqlite3_bind_int(insert, 6, is_nan ? 1 : 0);
    EXPECT_EQ(sqlite3_step(insert), SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(insert);
  }
  // Hugging Face's MLflowCallback at steps 10, 20, 30: learning_rate and loss (a NaN at 20, an infinity at 30), and
  // its TrainingArguments as params, max_steps among them.
  void trainer_run(const std::string& id, const std::string& name, int64_t started_ms, const std::string& max_steps) {
    run(id, name, started_ms);
    run_sql("INSERT INTO params VALUES ('max_steps', '" + max_steps + "', '" + id + "'); INSERT INTO params VALUES "
            "('learning_rate', '5e-05', '" + id + "')");
    for (int64_t k = 1; k <= 3; ++k) {
      log(id, "learning_rate", 5e-05 - 0.5e-05 * static_cast<double>(k - 1), 10 * k, started_ms + 1000 * k);
      log(id, "loss", k == 2 ? std::nan("") : k == 3 ? INFINITY : 2.5, 10 * k, started_ms + 1000 * k);
    }
  }
  void run_sql(const std::string& sql) {
    char* error = nullptr;
    EXPECT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
    sqlite3_free(error);
  }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

TEST(MlflowDatabase, ARunsMetricIsReadByTheDatabaseItsDirectoryOrTheRunsPath) {
  Store store("one_run");
  store.trainer_run("0a1b2c3d4e5f60718293a4b5c6d7e8f9", "bright-owl-12", 1764201600000, "200");
  const Series lr = read_series_file(store.path(), "/train/learning_rate", "/train/step", RepeatedSteps::Replace);
  EXPECT_EQ(lr.steps, (std::vector<double>{10, 20, 30}));
  EXPECT_EQ(lr.values, (std::vector<double>{5e-05, 4.5e-05, 4e-05}));
  EXPECT_EQ(lr.source, "MLflow run bright-owl-12 (0a1b2c3d4e5f60718293a4b5c6d7e8f9)'s metric learning_rate");
  EXPECT_FALSE(lr.last_line_cut);
  EXPECT_EQ(lr.run_steps, 200) << "its param max_steps";
  for (const std::string& path : {store.directory(), store.path() + "/bright-owl-12",
                                  store.path() + "/0a1b2c3d4e5f60718293a4b5c6d7e8f9"}) {
    const Series same = read_series_file(path, "learning_rate", "step", RepeatedSteps::Refuse);
    EXPECT_EQ(same.steps, lr.steps) << path;
    EXPECT_EQ(same.values, lr.values) << path;
  }
  // The loss's NaN and infinity, as MLflow stored them, read back as they were logged.
  const Series loss = read_series_file(store.path(), "train/loss", "step");
  ASSERT_EQ(loss.values.size(), 3u);
  EXPECT_EQ(loss.values[0], 2.5);
  EXPECT_TRUE(std::isnan(loss.values[1]));
  EXPECT_EQ(loss.values[2], INFINITY);
}

TEST(MlflowDatabase, AResumedRunsLaterRowsReplaceTheStepsItLoggedAgain) {
  Store store("resumed");
  store.trainer_run("r1", "resumed-run", 1764201600000, "-1");
  // Resumed from step 10's checkpoint after step 30 was logged, and killed after logging step 20 again: the rows
  // of the abandoned steps 20 and 30 go, which only the order of logging tells (by step, 30 would stay).
  store.log("r1", "learning_rate", 4.4e-05, 20, 1764201700000);
  const Series lr = read_series_file(store.path(), "learning_rate", "step", RepeatedSteps::Replace);
  EXPECT_EQ(lr.steps, (std::vector<double>{10, 20}));
  EXPECT_EQ(lr.values, (std::vector<double>{5e-05, 4.4e-05}));
  EXPECT_EQ(lr.replaced, 2u);
  EXPECT_EQ(lr.run_steps, 0) << "max_steps -1: the epochs set the length";
  EXPECT_EQ(refusal(store.path(), "learning_rate", RepeatedSteps::Refuse),
            "'" + store.path() + "': steps must increase strictly (row 4: 20 after 30)");
}

TEST(MlflowDatabase, SeveralRunsAreListedToNameOneAndDeletedRunsAreNotRead) {
  Store store("several");
  store.trainer_run("aaaa", "first", 1764201600000, "-1");
  store.trainer_run("bbbb", "second", 1764288000000, "-1");
  store.run("cccc", "evaluation", 1764374400000);
  store.log("cccc", "eval/loss", 2.0, 0, 1764374401000);
  EXPECT_EQ(refusal(store.path(), "learning_rate"),
            "'" + store.path() + "' holds 2 MLflow runs with a metric 'learning_rate' (second (bbbb), experiment "
            "lrkit, started 2025-11-28 00:00:00 UTC, first (aaaa), experiment lrkit, started 2025-11-27 00:00:00 "
            "UTC): name one as '" + store.path() + "/RUN', RUN its name or ID");
  EXPECT_EQ(read_series_file(store.path() + "/second", "learning_rate", "step").values.front(), 5e-05);
  EXPECT_EQ(refusal(store.path() + "/third", "learning_rate"),
            "'" + store.path() + "': no MLflow run has the ID or the name 'third' (its runs, the newest first: "
            "evaluation (cccc), experiment lrkit, started 2025-11-29 00:00:00 UTC, second (bbbb), experiment lrkit, "
            "started 2025-11-28 00:00:00 UTC, first (aaaa), experiment lrkit, started 2025-11-27 00:00:00 UTC)");
  EXPECT_EQ(refusal(store.path() + "/evaluation", "learning_rate"),
            "'" + store.path() + "': MLflow run evaluation (cccc) has no metric 'learning_rate' (its metrics: "
            "eval/loss)");
  EXPECT_EQ(refusal(store.path(), "/train/lr"),
            "'" + store.path() + "': none of its 3 MLflow runs has a metric 'train/lr' or 'lr' (their metrics: "
            "learning_rate, loss, eval/loss)");
  // Two runs of one name: named by the ID.
  store.trainer_run("dddd", "second", 1764460800000, "-1");
  EXPECT_NE(refusal(store.path() + "/second", "learning_rate")
                .find("': 2 MLflow runs are named 'second' (second (dddd), experiment lrkit, started 2025-11-30 "
                      "00:00:00 UTC, second (bbbb), "),
            std::string::npos);
  EXPECT_EQ(read_series_file(store.path() + "/dddd", "learning_rate", "step").steps.size(), 3u);
  // Deleted runs are MLflow's trash: the one run left is read without naming it.
  store.run_sql("UPDATE runs SET lifecycle_stage = 'deleted' WHERE run_uuid IN ('aaaa', 'bbbb')");
  EXPECT_EQ(read_series_file(store.path(), "learning_rate", "step").source,
            "MLflow run second (dddd)'s metric learning_rate");
}

TEST(MlflowDatabase, AnSqliteFileThatIsNoMlflowStoreIsRefused) {
  Store empty("no_runs");
  EXPECT_EQ(refusal(empty.path(), "learning_rate"), "'" + empty.path() + "': the MLflow store holds no run");
  const std::string other = (lrkit::testing::scratch_dir() / "other.sqlite").string();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(other.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE points (x REAL)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(refusal(other, "learning_rate"), "'" + other + "' is an SQLite database, not an MLflow store (it lacks "
                                             "MLflow's tables runs, metrics, params and experiments)");
}

#else

TEST(MlflowDatabase, StoresAreReadThroughSqlite) {
  GTEST_SKIP() << "this build has no SQLite (configure found no libsqlite3-dev): MLflow stores are not read, and the "
                  "tests that write them cannot";
}

#endif

}  // namespace
}  // namespace lrkit::schedules
