// Inputs are bounded: a file lrkit reads as data must be a regular file. A
// device (/dev/zero), FIFO or socket may never end, and a directory is not
// data; callers wrap the problem in their own error type.
#pragma once

#include <sys/stat.h>

#include <fstream>
#include <istream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "lrkit/common/file_status.hpp"

namespace lrkit {

// What keeps `path` from being read as a data file, or nothing.
inline std::optional<std::string> input_file_problem(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    std::string problem = "'" + path + "' does not exist or cannot be reached";
    // A config file's relative path is read from where lrkit runs, not from the file's folder.
    const auto here = working_directory();
    if (!path.empty() && path.front() != '/' && here)
      problem += " (relative to the working directory '" + *here + "')";
    return problem;
  }
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

// How much of an INI file's invalid line its error quotes (Boost's message around it included).
inline constexpr size_t kQuotedLineLimit = 200;

// The text of an INI file (a train config, a sweep file), `what` naming it in errors ("config file"): a regular
// file, without a UTF-8 byte-order mark. UTF-16 (a Windows editor's "Unicode") and NUL bytes (a binary file given by
// mistake) are refused here by name, where the INI parser would quote their bytes as an invalid line.
inline std::string read_ini_text(const std::string& path, const std::string& what) {
  if (const auto problem = input_file_problem(path)) throw std::invalid_argument(what + " " + *problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("cannot open " + what + " '" + path + "'");
  skip_byte_order_mark(in);
  std::ostringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  if (s.size() >= 2 && ((s[0] == '\xFF' && s[1] == '\xFE') || (s[0] == '\xFE' && s[1] == '\xFF')))
    throw std::invalid_argument(what + " '" + path + "' is UTF-16 text: save it as UTF-8");
  if (const auto nul = s.find('\0'); nul != std::string::npos)
    throw std::invalid_argument(what + " '" + path + "' holds a NUL byte (at byte " + std::to_string(nul) +
                                "): not text, or UTF-16 without a byte-order mark");
  return s;
}

}  // namespace lrkit
