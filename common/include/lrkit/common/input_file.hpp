// Inputs are bounded: a file lrkit reads as data must be a regular file. A
// device (/dev/zero), FIFO or socket may never end, and a directory is not
// data; callers wrap the problem in their own error type.
#pragma once

#include <sys/stat.h>

#include <istream>
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

// Spreadsheets ("CSV UTF-8"), pandas' utf-8-sig and Windows editors start UTF-8 text with a byte-order mark
// (EF BB BF). Left in, it becomes part of the first line's first name: a header's 'step' column goes
// unfound, an INI file's first '[section]' is an invalid line. Skips it where `in`, a file stream at its
// start, begins with one; otherwise leaves `in` where it was.
inline void skip_byte_order_mark(std::istream& in) {
  const auto start = in.tellg();
  char mark[3] = {};
  in.read(mark, sizeof mark);
  if (in.gcount() == 3 && mark[0] == '\xEF' && mark[1] == '\xBB' && mark[2] == '\xBF') return;
  in.clear();
  in.seekg(start);
}

}  // namespace lrkit
