// Scratch files for tests: a fresh directory per test process, removed when that
// process ends with every test passed (kept, and named, after a failure).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <system_error>

namespace lrkit::testing {

class ScratchDirectory {
 public:
  ScratchDirectory()
      : path_(std::filesystem::temp_directory_path() / ("lrkit_test_" + std::to_string(::getpid()))), owner_(::getpid()) {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);  // left by a crashed process that had this pid: not ours to read
    std::filesystem::create_directories(path_);
  }
  // A forked child that exits normally runs this too: only the process that made the directory removes it.
  ~ScratchDirectory() {
    if (::getpid() != owner_) return;
    if (!::testing::UnitTest::GetInstance()->Passed()) {
      std::cerr << "scratch files of the failed test kept in " << path_.string() << std::endl;
      return;
    }
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
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

}  // namespace lrkit::testing
