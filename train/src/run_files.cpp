#include "lrkit/train/run_files.hpp"

#include <cstdio>
#include <filesystem>

namespace lrkit::train {

namespace fs = std::filesystem;

std::string checkpoint_dir(const std::string& run_dir) { return (fs::path(run_dir) / "checkpoints").string(); }

std::string checkpoint_file_name(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step_%010lld.pt", static_cast<long long>(step));
  return buf;
}

std::string checkpoint_path(const std::string& run_dir, int64_t step) {
  return (fs::path(checkpoint_dir(run_dir)) / checkpoint_file_name(step)).string();
}

std::string replica_checkpoint_path(const std::string& main_path, int64_t replica) {
  const fs::path p(main_path);
  return (p.parent_path() / (p.stem().string() + ".replica_" + std::to_string(replica) + ".pt")).string();
}

bool is_replica_checkpoint(const std::string& file_name) { return file_name.find(".replica_") != std::string::npos; }

std::string profile_trace_path(const std::string& run_dir, int rank) {
  return (fs::path(run_dir) / "profile" / ("rank" + std::to_string(rank) + ".trace.json")).string();
}

}  // namespace lrkit::train
