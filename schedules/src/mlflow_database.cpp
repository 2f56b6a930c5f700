#include "mlflow_database.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "run_length.hpp"
#include "series_columns.hpp"

#ifdef LRKIT_HAVE_SQLITE
#include <sqlite3.h>
#endif

namespace lrkit::schedules {

bool is_sqlite_file(const std::string& path) {
  static const char kHeader[16] = {'S', 'Q', 'L', 'i', 't', 'e', ' ', 'f', 'o', 'r', 'm', 'a', 't', ' ', '3', '\0'};
  if (path_kind(path) != PathKind::kFile) return false;
  std::ifstream in(path, std::ios::binary);
  char header[sizeof kHeader] = {};
  return in.read(header, sizeof header) && std::equal(header, header + sizeof header, kHeader);
}

std::optional<MlflowDatabaseRun> mlflow_database_path(const std::string& path) {
  if (is_sqlite_file(path)) return MlflowDatabaseRun{path, ""};
  if (path_exists(path)) return std::nullopt;
  // A path that goes on past a file: DATABASE/RUN, where DATABASE is the first file on the way.
  const std::filesystem::path whole = std::filesystem::path(path).lexically_normal();
  std::filesystem::path at;
  for (auto part = whole.begin(); part != whole.end(); ++part) {
    at /= *part;
    const PathKind kind = path_kind(at.string());
    if (kind == PathKind::kDirectory) continue;
    if (kind != PathKind::kFile || !is_sqlite_file(at.string())) return std::nullopt;
    std::filesystem::path run;  // empty for "mlflow.db/"
    for (auto rest = std::next(part); rest != whole.end(); ++rest) run /= *rest;
    return MlflowDatabaseRun{at.string(), run.string()};
  }
  return std::nullopt;
}

std::optional<MlflowDatabaseRun> mlflow_database_in(const std::string& directory) {
  const std::string database = (std::filesystem::path(directory) / "mlflow.db").string();
  if (is_sqlite_file(database)) return MlflowDatabaseRun{database, ""};
  return std::nullopt;
}

#ifdef LRKIT_HAVE_SQLITE

namespace {

// A read-only connection: a missing file is never made an empty database, and nothing is written to it.
class Database {
 public:
  explicit Database(const std::string& path) : path_(path) {
    const int opened = sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READONLY, nullptr);
    if (opened != SQLITE_OK) {
      const std::string why = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(opened);
      sqlite3_close(db_);
      throw SeriesFileError("cannot open '" + path + "' as an SQLite database: " + why);
    }
    sqlite3_busy_timeout(db_, 5000);  // a run that is logging holds its write lock for a moment
  }
  ~Database() { sqlite3_close(db_); }
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  [[noreturn]] void fail(const std::string& doing) const {
    throw SeriesFileError("'" + path_ + "': " + doing + ": " + sqlite3_errmsg(db_) +
                          " (an SQLite database that is damaged, or locked by a writer for over 5 s)");
  }

  class Query {
   public:
    Query(const Database& db, const char* sql) : db_(db) {
      if (sqlite3_prepare_v2(db.db_, sql, -1, &statement_, nullptr) != SQLITE_OK)
        db.fail("reading it as an MLflow store");
    }
    ~Query() { sqlite3_finalize(statement_); }
    Query(const Query&) = delete;
    Query& operator=(const Query&) = delete;
    Query& bind(int index, const std::string& text) {
      sqlite3_bind_text(statement_, index, text.c_str(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
      return *this;
    }
    bool next() {
      const int stepped = sqlite3_step(statement_);
      if (stepped == SQLITE_ROW) return true;
      if (stepped != SQLITE_DONE) db_.fail("reading it as an MLflow store");
      return false;
    }
    std::string text(int column) const {
      const auto* chars = reinterpret_cast<const char*>(sqlite3_column_text(statement_, column));
      return chars ? std::string(chars, static_cast<size_t>(sqlite3_column_bytes(statement_, column))) : "";
    }
    double number(int column) const { return sqlite3_column_double(statement_, column); }
    int64_t whole(int column) const { return sqlite3_column_int64(statement_, column); }
    bool is_null(int column) const { return sqlite3_column_type(statement_, column) == SQLITE_NULL; }

   private:
    const Database& db_;
    sqlite3_stmt* statement_ = nullptr;
  };

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

struct Run {
  std::string id, name, experiment;
  std::optional<int64_t> started_ms;
  std::string metric;  // the first of the names looked for that it logs, or empty
};

std::string run_name(const Run& run) { return (run.name.empty() ? "" : run.name + " ") + "(" + run.id + ")"; }

std::string started_text(const std::optional<int64_t>& ms) {
  if (!ms) return "";
  const std::time_t seconds = static_cast<std::time_t>(*ms / 1000);
  std::tm utc{};
  char text[32];
  if (gmtime_r(&seconds, &utc) == nullptr || std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &utc) == 0)
    return "";
  return std::string(", started ") + text;
}

// The runs that are not deleted, the first started first.
std::vector<Run> runs_of(const Database& db) {
  Database::Query query(db, "SELECT r.run_uuid, r.name, e.name, r.start_time FROM runs r "
                            "LEFT JOIN experiments e ON e.experiment_id = r.experiment_id "
                            "WHERE r.lifecycle_stage IS NULL OR r.lifecycle_stage != 'deleted' "
                            "ORDER BY r.start_time, r.run_uuid");
  std::vector<Run> runs;
  while (query.next())
    runs.push_back({query.text(0), query.text(1), query.text(2),
                    query.is_null(3) ? std::nullopt : std::optional<int64_t>(query.whole(3)), ""});
  return runs;
}

std::vector<std::string> metrics_of(const Database& db, const std::string& run_id) {
  Database::Query query(db, "SELECT DISTINCT key FROM metrics WHERE run_uuid = ? ORDER BY key");
  query.bind(1, run_id);
  std::vector<std::string> keys;
  while (query.next()) keys.push_back(query.text(0));
  return keys;
}

bool logs_metric(const Database& db, const std::string& run_id, const std::string& key) {
  Database::Query query(db, "SELECT 1 FROM metrics WHERE key = ? AND run_uuid = ? LIMIT 1");
  return query.bind(1, key).bind(2, run_id).next();
}

// The runs listed in a message, the newest first, with their experiments and start times.
std::string listed(const std::vector<const Run*>& runs) {
  std::vector<std::string> items;
  for (auto it = runs.rbegin(); it != runs.rend(); ++it)
    items.push_back(run_name(**it) + ((*it)->experiment.empty() ? "" : ", experiment " + (*it)->experiment) +
                    started_text((*it)->started_ms));
  return list_for_message(items, 12);
}

// The run to read: the one `at` names (by ID, else by name), else the one that logs the metric (Run::metric).
const Run& chosen_run(const Database& db, const MlflowDatabaseRun& at, const std::vector<Run>& runs,
                      const std::vector<std::string>& names) {
  const auto lacking = [&](const Run& run) {
    const auto metrics = metrics_of(db, run.id);
    return SeriesFileError("'" + at.database + "': MLflow run " + run_name(run) + " has no metric " +
                           names_for_message(names) +
                           (metrics.empty() ? " (it has none)"
                                            : " (its metrics: " + list_for_message(metrics, 24) + ")"));
  };
  std::vector<const Run*> chosen;
  if (!at.run.empty()) {
    for (const Run& run : runs)
      if (run.id == at.run) chosen = {&run};
    if (chosen.empty())
      for (const Run& run : runs)
        if (run.name == at.run) chosen.push_back(&run);
    if (chosen.empty()) {
      std::vector<const Run*> all;
      for (const Run& run : runs) all.push_back(&run);
      throw SeriesFileError("'" + at.database + "': no MLflow run has the ID or the name '" +
                            text_for_message(at.run) + "' (its runs, the newest first: " + listed(all) + ")");
    }
    if (chosen.size() > 1)
      throw SeriesFileError("'" + at.database + "': " + std::to_string(chosen.size()) + " MLflow runs are named '" +
                            text_for_message(at.run) + "' (" + listed(chosen) + "): name one by its ID, as '" +
                            at.database + "/" + chosen.back()->id + "'");
    if (chosen.front()->metric.empty()) throw lacking(*chosen.front());
    return *chosen.front();
  }
  for (const Run& run : runs)
    if (!run.metric.empty()) chosen.push_back(&run);
  if (chosen.size() == 1) return *chosen.front();
  if (chosen.size() > 1)
    throw SeriesFileError("'" + at.database + "' holds " + std::to_string(chosen.size()) + " MLflow runs with a " +
                          "metric " + names_for_message(names) + " (" + listed(chosen) + "): name one as '" +
                          at.database + "/RUN', RUN its name or ID");
  if (runs.size() == 1) throw lacking(runs.front());
  std::vector<std::string> metrics;
  for (const Run& run : runs)
    for (const std::string& key : metrics_of(db, run.id))
      if (std::find(metrics.begin(), metrics.end(), key) == metrics.end()) metrics.push_back(key);
  throw SeriesFileError("'" + at.database + "': none of its " + std::to_string(runs.size()) +
                        " MLflow runs has a metric " + names_for_message(names) + " (their metrics: " +
                        list_for_message(metrics, 24) + ")");
}

}  // namespace

Series read_mlflow_database(const MlflowDatabaseRun& at, const std::string& values_name) {
  const Database db(at.database);
  {
    Database::Query tables(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
                               "name IN ('runs', 'metrics', 'params', 'experiments')");
    if (!tables.next() || tables.whole(0) != 4)
      throw SeriesFileError("'" + at.database + "' is an SQLite database, not an MLflow store (it lacks MLflow's "
                            "tables runs, metrics, params and experiments)");
  }
  const std::vector<std::string> names = column_names_for(values_name);
  std::vector<Run> runs = runs_of(db);
  if (runs.empty()) throw SeriesFileError("'" + at.database + "': the MLflow store holds no run");
  for (Run& run : runs)
    for (const std::string& name : names)
      if (run.metric.empty() && logs_metric(db, run.id, name)) run.metric = name;
  const Run& run = chosen_run(db, at, runs, names);
  Database::Query rows(db, "SELECT step, value, is_nan FROM metrics WHERE key = ? AND run_uuid = ? "
                           "ORDER BY timestamp, step");  // the order they were logged in: a resume's rows last
  rows.bind(1, run.metric).bind(2, run.id);
  Series series;
  while (rows.next()) {
    double value = rows.number(1);
    // MLflow stores a NaN as 0 with is_nan set and an infinity as the largest double of its sign (SQL has neither).
    if (rows.whole(2) != 0) value = std::nan("");
    else if (std::fabs(value) == DBL_MAX) value = std::copysign(INFINITY, value);
    series.steps.push_back(static_cast<double>(rows.whole(0)));
    series.values.push_back(value);
  }
  series.source = "MLflow run " + run_name(run) + "'s metric " + run.metric;
  Database::Query planned(db, "SELECT value FROM params WHERE key = 'max_steps' AND run_uuid = ?");
  double max_steps = 0.0;  // a Trainer's TrainingArguments, which Hugging Face's MLflowCallback logs as params
  if (planned.bind(1, run.id).next() && text_to_double(planned.text(0), max_steps))
    series.run_steps = planned_run_steps(max_steps);
  return series;
}

#else

Series read_mlflow_database(const MlflowDatabaseRun& at, const std::string&) {
  throw SeriesFileError("'" + at.database + "' is an SQLite database (an MLflow store?), and this lrkit was built "
                        "without SQLite: install its headers (Debian/Ubuntu: libsqlite3-dev) and build again");
}

#endif

}  // namespace lrkit::schedules
