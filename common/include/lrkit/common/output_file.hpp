// Outputs name a file to create: what keeps one from being created, in the
// words of a user who typed the path (the file system's errno says "No such
// file or directory" for a missing directory and "Is a directory" for a path
// that names one, without saying which part is wrong).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace lrkit {

// The path names a directory, or its directory is missing or is a file; nothing when it can be tried
// (permissions and full disks show when the write fails).
inline std::optional<std::string> output_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (fs::is_directory(path, ec)) return "it is a directory";
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return fs::exists(parent, ec) ? "'" + parent.string() + "' is not a directory"
                                  : "directory '" + parent.string() + "' does not exist";
  return std::nullopt;
}

}  // namespace lrkit
