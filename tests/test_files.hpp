// Scratch files for tests: a fresh directory per test process, removed when that
// process ends with every test passed (kept, and named, after a failure).
#pragma once

#include <ftw.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>
#include <vector>

namespace lrkit::testing {

// Removes a file or a directory tree; a missing path is no error. Not std::filesystem::remove_all: PyTorch's
// wheels since 2.5 export the std::filesystem of the libstdc++ they link statically (pytorch/pytorch#133437), and
// a test linked to LibTorch 2.11 that called remove_all on a directory ran that copy, which jumped to address 0.
inline void remove_tree(const std::filesystem::path& path) {
  const auto remove_one = [](const char* entry, const struct stat*, int, struct FTW*) {
    return std::remove(entry) == 0 || errno == ENOENT ? 0 : -1;
  };
  if (::nftw(path.c_str(), remove_one, 16, FTW_DEPTH | FTW_PHYS) != 0 && errno != ENOENT)
    throw std::system_error(errno, std::generic_category(), "cannot remove " + path.string());
}

class ScratchDirectory {
 public:
  ScratchDirectory()
      : path_(std::filesystem::temp_directory_path() / ("lrkit_test_" + std::to_string(::getpid()))), owner_(::getpid()) {
    remove_tree(path_);  // left by a crashed process that had this pid: not ours to read
    std::filesystem::create_directories(path_);
  }
  // A forked child that exits normally runs this too: only the process that made the directory removes it.
  ~ScratchDirectory() {
    if (::getpid() != owner_) return;
    if (!::testing::UnitTest::GetInstance()->Passed()) {
      std::cerr << "scratch files of the failed test kept in " << path_.string() << std::endl;
      return;
    }
    try {
      remove_tree(path_);
    } catch (const std::system_error& e) {
      std::cerr << e.what() << std::endl;
    }
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;

  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  pid_t owner_;
};

inline std::filesystem::path scratch_dir() {
  static const ScratchDirectory dir;
  return dir.path();
}

inline std::string write_text(const std::string& name, const std::string& content) {
  const auto path = scratch_dir() / name;
  std::ofstream(path) << content;
  return path.string();
}

// A binary file under the scratch directory, its directories made.
inline std::string write_bytes(const std::string& name, const std::string& bytes) {
  const auto path = scratch_dir() / name;
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary) << bytes;
  return path.string();
}

// The files a write of `path` made to rename over it and left (".NAME.PID-N.tmp", NAME cut where the whole would be
// too long; reserve_temporary_beside in lrkit/common/output_file.hpp): none once the write returned or failed.
inline std::vector<std::string> temporaries_beside(const std::filesystem::path& path) {
  std::vector<std::string> found;
  const std::string target = path.filename().string();
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(path.has_parent_path() ? path.parent_path() : ".", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 6 || name[0] != '.' || name.compare(name.size() - 4, 4, ".tmp") != 0) continue;
    const std::string without_mark = name.substr(0, name.rfind('.', name.size() - 5));  // ".NAME" of ".NAME.PID-N.tmp"
    if (without_mark.size() > 1 && target.rfind(without_mark.substr(1), 0) == 0) found.push_back(name);
  }
  return found;
}

}  // namespace lrkit::testing
