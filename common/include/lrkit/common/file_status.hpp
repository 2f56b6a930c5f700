// What a path names, asked of the kernel (stat(2), getcwd(3), mkdir(2)), not of std::filesystem: the LibTorch 2.x
// wheels export a copy of libstdc++'s filesystem (pytorch/pytorch#133437) that a program or a Python extension
// loaded beside them may call instead of libstdc++'s own, and some of that copy crashed (bench/GPU_NOTES.md).
// std::filesystem::path stays for composing names; the calls that touch the disk go through here.
#pragma once

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lrkit {

enum class PathKind { kMissing, kFile, kDirectory, kOther, kLinkLoop };

// What `path` names, through links: kOther for a device, pipe or socket; kLinkLoop where the links never end;
// kMissing where nothing is there or it cannot be reached.
inline PathKind path_kind(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return errno == ELOOP ? PathKind::kLinkLoop : PathKind::kMissing;
  if (S_ISREG(info.st_mode)) return PathKind::kFile;
  if (S_ISDIR(info.st_mode)) return PathKind::kDirectory;
  return PathKind::kOther;
}

inline bool is_directory_path(const std::string& path) { return path_kind(path) == PathKind::kDirectory; }

inline bool path_exists(const std::string& path) {
  const PathKind kind = path_kind(path);
  return kind != PathKind::kMissing && kind != PathKind::kLinkLoop;
}

// The device and inode of the directory `path` names, through links; nothing where it names no directory. Two paths
// with the same identity are one directory (a walk that meets one again has gone round a link).
inline std::optional<std::pair<uint64_t, uint64_t>> directory_identity(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) return std::nullopt;
  return std::make_pair(static_cast<uint64_t>(info.st_dev), static_cast<uint64_t>(info.st_ino));
}

// The size in bytes of what `path` names, or nothing where it cannot be reached.
inline std::optional<uint64_t> file_size_of(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return static_cast<uint64_t>(info.st_size);
}

// The names in `directory` (not "." or ".."), sorted; none where it cannot be read.
inline std::vector<std::string> directory_names(const std::string& directory) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(directory.c_str());
  if (dir == nullptr) return names;
  while (const dirent* entry = ::readdir(dir)) {
    const std::string name = entry->d_name;
    if (name != "." && name != "..") names.push_back(name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

// The working directory, or nothing where it is gone or too deep to name.
inline std::optional<std::string> working_directory() {
  std::vector<char> name(4096);
  while (::getcwd(name.data(), name.size()) == nullptr) {
    if (errno != ERANGE || name.size() >= (1u << 20)) return std::nullopt;
    name.resize(name.size() * 2);
  }
  return std::string(name.data());
}

// Makes `folder` and the folders above it that are missing. Returns why the first that cannot be made is not (a
// file in its place, or the errno text), or nothing once `folder` is a directory.
inline std::optional<std::string> make_directories(const std::string& folder) {
  for (size_t end = folder.find('/', 1);; end = folder.find('/', end + 1)) {
    const std::string prefix = folder.substr(0, end);
    if (!prefix.empty() && !is_directory_path(prefix) && ::mkdir(prefix.c_str(), 0777) != 0) {
      const int reason = errno;
      if (reason != EEXIST) return std::string(std::strerror(reason));
      if (!is_directory_path(prefix)) return "'" + prefix + "' is not a directory";  // else made meanwhile
    }
    if (end == std::string::npos) return std::nullopt;
  }
}

}  // namespace lrkit
