// Small files lrkit reads or writes whole (a sweep's markers, a profiler trace).
// Writes go beside the target and are renamed over it, so a kill leaves the old
// file or the new one, never half of one.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "lrkit/common/output_file.hpp"

namespace lrkit {

// Creates the parent directory if needed; a link at `path` stays, and the file it names is written (output_file.hpp's
// write_whole). Throws std::runtime_error naming the file and the reason.
inline void write_text_atomically(const std::filesystem::path& path, const std::string& text) {
  if (path.has_parent_path()) {
    if (const auto problem = make_directories(path.parent_path().string()))
      throw std::runtime_error("cannot create directory '" + path.parent_path().string() + "': " + *problem);
  }
  write_whole(path.string(), [&](const std::filesystem::path& temporary) {
    errno = 0;  // the reason below is this write's, not an earlier call's
    std::ofstream out(temporary, std::ios::trunc | std::ios::binary);
    out << text;
    out.flush();
    if (!out)
      throw std::runtime_error("cannot write '" + path.string() + "': " + (errno != 0 ? std::strerror(errno) : "write failed"));
  });
}

// The whole file; throws std::runtime_error naming it when it cannot be read.
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read '" + path.string() + "'");
  return text.str();
}

}  // namespace lrkit
