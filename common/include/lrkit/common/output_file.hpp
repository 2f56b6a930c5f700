// Outputs name a file to create: what keeps one from being created, in the
// words of a user who typed the path (the file system's errno says "No such
// file or directory" for a missing directory and "Is a directory" for a path
// that names one, without saying which part is wrong).
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace lrkit {

// lrkit writes an output whole beside its path and renames it over the path (a kill leaves the old file or the new
// one): a device, pipe or socket there (/dev/null, as root, or a link to it) would be replaced by a regular file.
inline std::optional<std::string> replaced_non_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);  // through links: a link to /dev/null is refused too
  if (ec || !fs::exists(status) || fs::is_regular_file(status) || fs::is_directory(status)) return std::nullopt;
  return "it is not a regular file (a device or pipe), and writing the file whole and renaming it into place would "
         "replace it: name a file";
}

// The path names a directory or a device or pipe, or its directory is missing or is a file; nothing when it can be
// tried (permissions and full disks show when the write fails).
inline std::optional<std::string> output_file_problem(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path parent = fs::path(path).parent_path();
  if (fs::is_directory(path, ec)) return "it is a directory";
  if (auto problem = replaced_non_file_problem(path)) return problem;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    return fs::exists(parent, ec) ? "'" + parent.string() + "' is not a directory"
                                  : "directory '" + parent.string() + "' does not exist";
  return std::nullopt;
}

}  // namespace lrkit
