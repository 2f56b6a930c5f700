// Scratch files for tests: a fresh directory per test binary run, removed at exit.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace lrkit::testing {

inline std::filesystem::path scratch_dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("lrkit_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string write_text(const std::string& name, const std::string& content) {
  const auto path = scratch_dir() / name;
  std::ofstream(path) << content;
  return path.string();
}

}  // namespace lrkit::testing
