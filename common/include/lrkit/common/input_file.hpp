// Inputs are bounded: a file lrkit reads as data must be a regular file. A
// device (/dev/zero), FIFO or socket may never end, and a directory is not
// data; callers wrap the problem in their own error type.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>

namespace lrkit {

// What keeps `path` from being read as a data file, or nothing.
inline std::optional<std::string> input_file_problem(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return "'" + path + "' does not exist or cannot be reached";
  if (S_ISDIR(info.st_mode)) return "'" + path + "' is a directory, not a file";
  if (!S_ISREG(info.st_mode)) return "'" + path + "' is not a regular file (a device or pipe may never end)";
  return std::nullopt;
}

}  // namespace lrkit
