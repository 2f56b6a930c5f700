// The per-rank logs a caller names: paths, run directories (an lrkit run's, a W&B run's, a directory above W&B runs),
// and quoted globs (`lrkit diagnose 'logs/rank*.csv'`, lrkit.diagnose("logs/rank*.csv")), a glob's files in the order
// of their ranks.
#include <glob.h>

#include <algorithm>
#include <cctype>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/run_log_file.hpp"
#include "lrkit/common/tfevents.hpp"
#include "lrkit/common/wandb_log_reader.hpp"
#include "lrkit/common/wandb_runs.hpp"
#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {
namespace {

bool has_glob_characters(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// Names compared with their digit runs as numbers: rank10 after rank9, as one file per rank is numbered.
bool natural_less(const std::string& a, const std::string& b) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      const auto x = std::stoull(a.substr(i, std::min<size_t>(ie - i, 18)));
      const auto y = std::stoull(b.substr(j, std::min<size_t>(je - j, 18)));
      if (x != y) return x < y;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  return a.size() - i < b.size() - j;
}

std::vector<std::string> matches(const std::string& pattern) {
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), 0, nullptr, &found);
  std::vector<std::string> paths(found.gl_pathv, found.gl_pathv + found.gl_pathc);
  ::globfree(&found);
  if (rc != 0 || paths.empty()) throw RankLogError("no file matches '" + pattern + "'");
  std::sort(paths.begin(), paths.end(), natural_less);
  return paths;
}

// The logs a path names: a run directory's log (an lrkit run's log.h5, a W&B run's .wandb), the W&B runs' logs
// below a directory (every session of every run: the reader gathers them by run), a directory's TensorBoard event
// files and those of the runs below it (the reader gathers them by directory), else the path as given, for the
// reader's own checks.
std::vector<std::string> logs_named(const std::string& input) {
  const std::string path = run_log_argument(input);
  if (!is_directory_path(path)) return {path};
  try {
    if (std::string log = wandb_log_in(path); !log.empty()) return {log};
  } catch (const WandbLogError& e) {
    throw RankLogError(e.what());
  }
  const auto runs = wandb_runs_by_id(path);
  if (!runs) {
    const auto below = wandb_runs_below(path);
    throw RankLogError("'" + path + "': the W&B runs below it (" + list_for_message(below, 10) + ") are not each a " +
                       "directory [offline-]run-DATE_TIME-ID holding one run log: name their .wandb files");
  }
  std::vector<std::string> logs;
  for (const WandbRun& run : *runs) logs.insert(logs.end(), run.sessions.begin(), run.sessions.end());
  if (!logs.empty()) return logs;
  // TensorBoard: the directory's own event files and those of the runs directly below it.
  logs = tfevents_files_in(path);
  for (const TfEventsRun& run : tfevents_runs_below(path)) logs.insert(logs.end(), run.files.begin(), run.files.end());
  return logs.empty() ? std::vector<std::string>{path} : logs;
}

}  // namespace

std::vector<std::string> rank_log_paths(const std::vector<std::string>& inputs) {
  std::vector<std::string> paths;
  for (const auto& input : inputs) {
    // A path that exists is itself, whatever characters it holds ("runs/a[1]" was read as a pattern).
    const bool pattern = has_glob_characters(input) && !path_exists(input);
    for (const std::string& match : pattern ? matches(input) : std::vector<std::string>{input}) {
      const auto named = logs_named(match);
      paths.insert(paths.end(), named.begin(), named.end());
    }
  }
  return paths;
}

}  // namespace lrkit::diagnostics
