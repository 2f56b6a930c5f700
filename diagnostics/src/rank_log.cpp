#include "lrkit/diagnostics/rank_log.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/tfevents.hpp"
#include "lrkit/common/wandb_log_reader.hpp"
#include "lrkit/h5/file.hpp"
#include "rank_log_parts.hpp"

namespace lrkit::diagnostics {

// A gradient norm is >= 0 and a cosine within [-1, 1], up to rounding. A finite value outside says the column holds
// another quantity (one mapped by mistake), whose report would be garbage: the problem in words, or "". NaN and Inf,
// a diverged rank's, are what the report looks for and are read as they are.
std::string out_of_range(Field field, double value) {
  constexpr double kCosineRounding = 1e-3;  // a cosine computed in float32 or bfloat16 strays past 1
  if (!std::isfinite(value)) return "";
  if (field == kGradNorm && value < 0) return "is not a gradient norm (a norm is >= 0)";
  if (field == kCosToMean && std::fabs(value) > 1 + kCosineRounding) return "is not a cosine (in [-1, 1])";
  return "";
}

// The resumes among a log's sessions, given in the order they ran (the first started the rows the log begins with),
// whose rows the log holds: each session's rows last until a later one starts at or before them (a resume from an
// earlier checkpoint rewrote them), and a resume killed before its first row started none.
std::vector<Resume> resumes_with_rows(const std::vector<Resume>& sessions, const std::vector<double>& steps) {
  std::vector<Resume> in_effect;
  for (const Resume& session : sessions) {
    while (!in_effect.empty() && in_effect.back().step >= session.step) in_effect.pop_back();
    in_effect.push_back(session);
  }
  std::vector<Resume> resumes;
  for (size_t k = 1; k < in_effect.size(); ++k)
    if (!steps.empty() && in_effect[k].step <= steps.back()) resumes.push_back(in_effect[k]);
  return resumes;
}

namespace {

// A run log's sessions (/sessions/0, 1, ...). A session whose step does not read is left out with a warning (a
// damaged attribute should not cost the report).
void read_resumes(const std::string& path, RankLog& log) {
  std::vector<Resume> started;
  const auto sessions = h5::read_numbered_attributes(path, "/sessions");
  log.records_sessions = !sessions.empty();
  for (size_t i = 0; i < sessions.size(); ++i) {
    const auto& attributes = sessions[i];
    const auto step = attributes.count("step") ? parse_integer(attributes.at("step")) : std::nullopt;
    if (!step) {
      log.warnings.push_back("'" + path + "': /sessions/" + std::to_string(i) +
                             " has no whole step (attribute 'step'); its session is left out");
      continue;
    }
    const auto changed = attributes.find("changed");
    started.push_back({static_cast<double>(*step), changed == attributes.end() ? std::nullopt
                                                                               : std::optional<std::string>(changed->second)});
  }
  log.resumes = resumes_with_rows(started, log.steps);
}

// A log its writer still holds, or left marked when killed, may end inside a
// flush: some series already hold rows the others do not yet (SeriesLog writes
// them one after another). Those rows are set aside with a warning; in a log
// closed properly, unequal lengths are an error.
RankLog read_run_log(const std::string& path) {
  RankLog log;
  log.source = path + " (lrkit run log)";
  try {
    for (const char* required : {"/train/step", "/ranks/loss", "/ranks/grad_norm"})
      if (!h5::has_dataset(path, required))
        throw RankLogError("'" + path + "' has no dataset " + required + " (is it an lrkit run log?)");
    log.steps = h5::read_series(path, "/train/step");
    auto loss = h5::read_matrix(path, "/ranks/loss");
    auto norm = h5::read_matrix(path, "/ranks/grad_norm");
    h5::Matrix cos_to_mean;
    const bool has_cos_to_mean = h5::has_dataset(path, "/ranks/cos_to_mean");
    if (has_cos_to_mean) cos_to_mean = h5::read_matrix(path, "/ranks/cos_to_mean");
    log.global_grad_norm = h5::read_series(path, "/train/grad_norm");
    std::vector<double> cos_pairwise;
    const bool has_cos_pairwise = h5::has_dataset(path, "/diagnostics/cos_pairwise");
    if (has_cos_pairwise) cos_pairwise = h5::read_series(path, "/diagnostics/cos_pairwise");
    const bool has_skipped = h5::has_dataset(path, "/train/skipped");
    if (has_skipped) log.skipped = h5::read_series(path, "/train/skipped");

    std::vector<int64_t> lengths = {static_cast<int64_t>(log.steps.size()), loss.rows, norm.rows,
                                    static_cast<int64_t>(log.global_grad_norm.size())};
    if (has_cos_to_mean) lengths.push_back(cos_to_mean.rows);
    if (has_cos_pairwise) lengths.push_back(static_cast<int64_t>(cos_pairwise.size()));
    if (has_skipped) lengths.push_back(static_cast<int64_t>(log.skipped.size()));
    const int64_t whole = *std::min_element(lengths.begin(), lengths.end());
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    if (longest > whole && h5::has_writer_mark(path)) {
      const auto cut_matrix = [whole](h5::Matrix& m) {
        m.rows = std::min(m.rows, whole);
        m.values.resize(static_cast<size_t>(m.rows * m.columns));
      };
      const auto cut_series = [whole](std::vector<double>& v) { v.resize(std::min(v.size(), static_cast<size_t>(whole))); };
      for (auto* m : {&loss, &norm, &cos_to_mean}) cut_matrix(*m);
      for (auto* v : {&log.steps, &log.global_grad_norm, &cos_pairwise, &log.skipped}) cut_series(*v);
      log.warnings.push_back("'" + path + "' is marked open for writing (a run writes it, or was killed): read the " +
                             std::to_string(whole) + " steps every series has; up to " + std::to_string(longest - whole) +
                             " more rows in some series are a flush under way or cut short");
    }

    log.ranks = loss.columns;
    auto check_rows = [&](const std::string& name, const h5::Matrix& m) {
      if (m.rows != static_cast<int64_t>(log.steps.size()) || m.columns != log.ranks)
        throw RankLogError("'" + path + "': " + name + " is [" + std::to_string(m.rows) + ", " + std::to_string(m.columns) +
                           "] but /train/step has " + std::to_string(log.steps.size()) + " rows and /ranks/loss " +
                           std::to_string(log.ranks) + " ranks");
    };
    check_rows("/ranks/loss", loss);
    check_rows("/ranks/grad_norm", norm);
    log.loss = std::move(loss.values);
    log.grad_norm = std::move(norm.values);
    if (has_cos_to_mean) {
      check_rows("/ranks/cos_to_mean", cos_to_mean);
      log.cos_to_mean = std::move(cos_to_mean.values);
    }
    for (size_t t = 1; t < log.steps.size(); ++t)
      if (!(log.steps[t] > log.steps[t - 1]))
        throw RankLogError("'" + path + "': /train/step does not increase at row " + std::to_string(t) + " (" +
                           format_number(log.steps[t]) + " after " + format_number(log.steps[t - 1]) +
                           "); `lrkit log check` says what else is wrong with the file");
    const auto check_range = [&](const std::string& name, Field field, const std::vector<double>& values) {
      for (size_t i = 0; i < values.size(); ++i)
        if (const std::string problem = out_of_range(field, values[i]); !problem.empty())
          throw RankLogError("'" + path + "': " + name + " at step " + format_number(log.steps[i / log.ranks]) + ", rank " +
                             std::to_string(i % log.ranks) + " is " + format_number(values[i]) + ", which " + problem);
    };
    check_range("/ranks/grad_norm", kGradNorm, log.grad_norm);
    check_range("/ranks/cos_to_mean", kCosToMean, log.cos_to_mean);
    auto check_length = [&](const std::string& name, size_t rows) {
      if (rows != log.steps.size())
        throw RankLogError("'" + path + "': " + name + " has " + std::to_string(rows) + " rows but /train/step has " +
                           std::to_string(log.steps.size()));
    };
    check_length("/train/grad_norm", log.global_grad_norm.size());
    if (has_skipped) check_length("/train/skipped", log.skipped.size());
    if (has_cos_pairwise) {
      check_length("/diagnostics/cos_pairwise", cos_pairwise.size());
      bool measured = false;
      for (double c : cos_pairwise) measured = measured || !std::isnan(c);
      if (measured) log.cos_pairwise = std::move(cos_pairwise);
    }
    read_resumes(path, log);
  } catch (const h5::Error& e) {
    throw RankLogError(e.what());
  }
  return log;
}

}  // namespace

std::map<std::string, std::string> parse_column_mapping(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> entries;
  // Entries split as a CSV line's fields: one in double quotes may hold a comma ("loss=mean, all",step=it).
  std::vector<std::string> split;
  try {
    split = text.empty() ? split : split_csv_line(text, ',');
  } catch (const std::invalid_argument& e) {
    throw RankLogError("--columns: " + std::string(e.what()));
  }
  for (const std::string& entry : split) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
      throw RankLogError("--columns: '" + entry + "' is not FIELD=NAME (e.g. loss=train/loss" +
                         (split.size() > 1 ? "; an entry whose name holds a comma goes in double quotes: \"loss=a, b\")"
                                           : ")"));
    entries.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
  }
  if (entries.empty()) throw RankLogError("--columns is empty (e.g. --columns loss=train/loss,step=global_step)");
  return column_mapping(entries);
}

std::map<std::string, std::string> column_mapping(const std::vector<std::pair<std::string, std::string>>& entries) {
  std::map<std::string, std::string> mapping;
  for (const auto& [field, name] : entries) {
    if (std::find(std::begin(kFields), std::end(kFields), field) == std::end(kFields))
      throw RankLogError("--columns: unknown field '" + field + "' (fields: step, rank, loss, grad_norm, cos_to_mean)");
    if (name.empty()) throw RankLogError("--columns: field '" + field + "' is mapped to an empty name");
    if (!mapping.emplace(field, name).second) throw RankLogError("--columns: '" + field + "' is mapped twice");
  }
  return mapping;
}

namespace {

// The kinds of per-rank logs, told by their content.
enum class LogKind { run_log, wandb, tfevents, text };

LogKind kind_of(const std::string& path) {
  if (h5::is_hdf5_file(path)) return LogKind::run_log;
  if (is_wandb_file(path)) return LogKind::wandb;
  if (is_tfevents_file(path)) return LogKind::tfevents;
  return LogKind::text;
}

const char* kind_name(LogKind kind) {
  switch (kind) {
    case LogKind::run_log: return "an HDF5 run log";
    case LogKind::wandb: return "a W&B run log";
    case LogKind::tfevents: return "a TensorBoard event file";
    case LogKind::text: return "a CSV or JSON-lines log";
  }
  return "";
}

}  // namespace

RankLog read_rank_log(const std::string& path, const ReadOptions& options) {
  if (const auto problem = input_file_problem(path)) throw RankLogError(*problem);
  switch (kind_of(path)) {
    case LogKind::run_log: return read_run_log(path);
    case LogKind::wandb: return read_wandb_rank_logs({path}, options);
    case LogKind::tfevents: return read_tfevents_rank_logs({path}, options);
    case LogKind::text: break;
  }
  return read_text_rank_logs({path}, options);
}

RankLog read_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  if (paths.empty()) throw RankLogError("no per-rank files given");
  if (paths.size() == 1) return read_rank_log(paths.front(), options);
  std::vector<LogKind> kinds;
  for (const auto& path : paths) {
    kinds.push_back(kind_of(path));
    if (kinds.back() == LogKind::run_log)
      throw RankLogError("'" + path + "' is an HDF5 run log: it holds every rank already; give it alone");
  }
  const auto other = std::find_if(kinds.begin(), kinds.end(), [&](LogKind k) { return k != kinds.front(); });
  if (other != kinds.end()) {
    for (size_t i = 0; i < paths.size(); ++i)  // a path that is no log at all is named as such
      if (kinds[i] == LogKind::text)
        if (const auto problem = input_file_problem(paths[i])) throw RankLogError(*problem);
    const std::string& odd = paths[static_cast<size_t>(other - kinds.begin())];
    throw RankLogError("'" + paths.front() + "' is " + kind_name(kinds.front()) + " and '" + odd + "' " +
                       kind_name(*other) + ": give logs of one kind (the W&B runs alone, the TensorBoard event files "
                       "alone or the text logs alone)");
  }
  switch (kinds.front()) {
    case LogKind::wandb: return read_wandb_rank_logs(paths, options);
    case LogKind::tfevents: return read_tfevents_rank_logs(paths, options);
    default: return read_text_rank_logs(paths, options);
  }
}

}  // namespace lrkit::diagnostics
