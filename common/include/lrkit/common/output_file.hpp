// Outputs name a file to create: what keeps one from being created, in the
// words of a user who typed the path (the file system's errno says "No such
// file or directory" for a missing directory and "Is a directory" for a path
// that names one, without saying which part is wrong).
#pragma once

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <system_error>

#include "lrkit/common/file_status.hpp"

namespace lrkit {

// lrkit writes an output whole beside its path and renames it over the path (a kill leaves the old file or the new
// one): a device, pipe or socket there (/dev/null, as root, or a link to it) would be replaced by a regular file.
// A loop of links is refused too: nothing can be written through it.
inline std::optional<std::string> replaced_non_file_problem(const std::string& path) {
  const PathKind kind = path_kind(path);  // through links: a link to /dev/null is refused too
  if (kind == PathKind::kLinkLoop) return "it is a link in a loop of links";
  if (kind != PathKind::kOther) return std::nullopt;
  return "it is not a regular file (a device or pipe), and writing the file whole and renaming it into place would "
         "replace it: name a file";
}

// Where `path` leads: the file a link there names (through a chain of links; for a dangling link, the file to
// create), in its folder as the kernel resolves it; else `path` itself. An output is written whole beside this and
// renamed over it: beside the link, the rename would put a file in the link's place and leave the file it names as
// it was, where a shell's `>` writes through the link (a log kept on another disk by a link). Call after
// replaced_non_file_problem, which refuses a loop of links.
inline std::filesystem::path through_links(const std::filesystem::path& path) {
  // lstat, readlink and realpath, not std::filesystem's calls (file_status.hpp says why).
  std::filesystem::path at = path;
  char target[PATH_MAX + 1];
  for (int hops = 0; hops < 40; ++hops) {  // the kernel's own limit on links followed
    struct stat info {};
    if (::lstat(at.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) break;
    const ssize_t size = ::readlink(at.c_str(), target, PATH_MAX);
    if (size <= 0) break;
    const std::filesystem::path next(std::string(target, static_cast<size_t>(size)));
    at = next.is_absolute() ? next : at.parent_path() / next;
  }
  if (at == path) return at;
  // Its folder as the kernel finds it: "runs/../scratch/a" read as "scratch/a" would be wrong where runs is a link.
  const std::string folder = at.has_parent_path() ? at.parent_path().string() : ".";
  char resolved[PATH_MAX + 1];
  if (::realpath(folder.c_str(), resolved) == nullptr) return at;  // a folder to be made: the write names it
  return std::filesystem::path(resolved) / at.filename();
}

// `name` cut to at most `room` bytes, at a character's start where it is UTF-8 (a cut name shows whole characters).
inline std::string name_cut_to(const std::string& name, size_t room) {
  if (name.size() <= room) return name;
  size_t end = room;
  while (end > 0 && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) --end;
  return name.substr(0, end);
}

// The longest file name `folder`'s file system takes (255 on Linux's).
inline size_t longest_name_in(const std::filesystem::path& folder) {
  const long longest = ::pathconf(folder.c_str(), _PC_NAME_MAX);
  return longest > 0 ? static_cast<size_t>(longest) : 255;
}

// A new empty file beside `target` to write its next version in before it is renamed over `target`: a name of its
// own, ".NAME.PID-N.tmp", so that two writers of one output (the ranks of a job that each save it, two scripts) never
// write into one file, where a reader found half of one version with half of the other and one writer's rename
// failed. NAME is cut where the whole would pass the file system's longest name: a target's name as long as the
// file system takes can be written. Made with O_EXCL and the mode any new file gets (the umask's). Sets `ec` where
// it cannot be made.
inline std::filesystem::path reserve_temporary_beside(const std::filesystem::path& target, std::error_code& ec) {
  static std::atomic<unsigned> made{0};
  const std::filesystem::path folder = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
  const size_t longest = longest_name_in(folder);
  for (int attempt = 0; attempt < 1000; ++attempt) {  // names of a dead process's kill, or of a pid on another machine
    const std::string mark = "." + std::to_string(::getpid()) + "-" + std::to_string(made++) + ".tmp";
    const size_t room = longest > mark.size() + 1 ? longest - mark.size() - 1 : 0;
    const std::filesystem::path temporary = folder / ("." + name_cut_to(target.filename().string(), room) + mark);
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      ec.clear();
      return temporary;
    }
    if (errno != EEXIST) {
      ec = std::error_code(errno, std::generic_category());
      return {};
    }
  }
  ec = std::make_error_code(std::errc::file_exists);
  return {};
}

// A whole write that failed, "cannot write 'PATH': REASON": before its file was written (`refused`: a pipe at the
// path, a folder that does not exist, one that takes no new file) or when the written file could not be put in place.
class WholeWriteError : public std::runtime_error {
 public:
  WholeWriteError(const std::string& path, const std::string& reason, bool refused)
      : std::runtime_error("cannot write '" + path + "': " + reason), refused_(refused) {}
  bool refused() const { return refused_; }

 private:
  bool refused_;
};

// Writes the file `path` leads to whole, so that a kill or a failure leaves its old version or its new one, never
// half of one: `write(temporary)` fills a file of its own beside it (reserve_temporary_beside), which is renamed over
// it. A link at `path` stays and the file it names is written (through_links). The temporary is removed on any
// failure; what `write` throws goes on as it is, and the rest throws WholeWriteError. POSIX calls, for the reason
// through_links gives.
template <typename Write>
void write_whole(const std::string& path, Write&& write) {
  if (const auto problem = replaced_non_file_problem(path)) throw WholeWriteError(path, *problem, true);
  const std::filesystem::path target = through_links(path);
  std::error_code reserved;
  const std::filesystem::path temporary = reserve_temporary_beside(target, reserved);
  if (reserved) throw WholeWriteError(path, reserved.message(), true);
  try {
    write(temporary);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  if (::rename(temporary.c_str(), target.c_str()) != 0) {
    const int reason = errno;
    ::unlink(temporary.c_str());
    throw WholeWriteError(path, std::strerror(reason), false);
  }
}

// The path names a directory or a device or pipe, or its directory is missing or is a file; nothing when it can be
// tried (permissions and full disks show when the write fails).
inline std::optional<std::string> output_file_problem(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  if (is_directory_path(path)) return "it is a directory";
  if (auto problem = replaced_non_file_problem(path)) return problem;
  if (!parent.empty() && !is_directory_path(parent))
    return path_exists(parent) ? "'" + parent + "' is not a directory" : "directory '" + parent + "' does not exist";
  return std::nullopt;
}

}  // namespace lrkit
