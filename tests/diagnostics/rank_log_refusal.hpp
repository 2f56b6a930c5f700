// What read_rank_log says of a log it refuses: the tests of the run-log and text readers compare it.
#pragma once

#include <string>

#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {

// The reader's message, or "no error" where it reads the log.
inline std::string error_of(const std::string& path, const ReadOptions& options = ReadOptions()) {
  try {
    read_rank_log(path, options);
  } catch (const RankLogError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace lrkit::diagnostics
