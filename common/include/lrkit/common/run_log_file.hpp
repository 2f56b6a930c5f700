// A run directory (what `lrkit train --out DIR` makes) keeps its log in DIR/log.h5. Every reader of a log takes
// the directory for it: lrkit diagnose, log and refine, and the schedules that read a series (refined(norms=DIR),
// table(file=DIR)). Here so that the schedule library, which knows nothing of the trainer, names the same file.
#pragma once

#include <filesystem>
#include <string>

#include "lrkit/common/file_status.hpp"

namespace lrkit {

// The log of the run in `run_dir`.
inline std::string run_log_path(const std::string& run_dir) { return (std::filesystem::path(run_dir) / "log.h5").string(); }

// A run directory holding a log stands for its log; any other path is returned as given, for the reader's own
// checks (a missing file, or a directory without a log, is the reader's to name).
inline std::string run_log_argument(const std::string& path) {
  if (is_directory_path(path)) {
    auto log = run_log_path(path);
    if (path_exists(log)) return log;
  }
  return path;
}

}  // namespace lrkit
