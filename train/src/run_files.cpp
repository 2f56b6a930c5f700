#include "lrkit/train/run_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/numbers.hpp"

namespace lrkit::train {

namespace fs = std::filesystem;

namespace {

// The text between `prefix` and `suffix` where `name` is prefix + text + suffix, the text not empty.
std::optional<std::string> text_between(const std::string& name, const std::string& prefix, const std::string& suffix) {
  if (name.size() <= prefix.size() + suffix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
      name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  return name.substr(prefix.size(), name.size() - prefix.size() - suffix.size());
}

bool all_digits(const std::string& text) {
  return std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::string checkpoint_dir(const std::string& run_dir) { return (fs::path(run_dir) / "checkpoints").string(); }

std::string checkpoint_file_name(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step_%010lld.pt", static_cast<long long>(step));
  return buf;
}

std::optional<int64_t> checkpoint_step_of(const std::string& file_name) {
  const auto digits = text_between(file_name, "step_", ".pt");
  if (!digits || !all_digits(*digits)) return std::nullopt;
  return parse_integer(*digits);
}

std::vector<fs::path> checkpoints_oldest_first(const std::string& run_dir) {
  std::vector<std::pair<int64_t, fs::path>> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir(run_dir), ec))
    if (const auto step = checkpoint_step_of(entry.path().filename().string())) found.emplace_back(*step, entry.path());
  std::sort(found.begin(), found.end());  // by step: past 10 digits the names no longer sort as their steps
  std::vector<fs::path> files;
  for (auto& [step, path] : found) files.push_back(std::move(path));
  return files;
}

std::optional<std::string> latest_checkpoint(const std::string& run_dir) {
  const auto files = checkpoints_oldest_first(run_dir);
  if (files.empty()) return std::nullopt;
  return files.back().string();
}

std::string checkpoint_path(const std::string& run_dir, int64_t step) {
  return (fs::path(checkpoint_dir(run_dir)) / checkpoint_file_name(step)).string();
}

std::string replica_checkpoint_path(const std::string& main_path, int64_t replica) {
  const fs::path p(main_path);
  return (p.parent_path() / (p.stem().string() + ".replica_" + std::to_string(replica) + ".pt")).string();
}

namespace {

// A replica file's name, step_<step>.replica_<g>.pt (replica_checkpoint_path).
bool is_replica_file_name(const std::string& name) {
  const auto inside = text_between(name, "step_", ".pt");
  const std::string mark = ".replica_";
  const size_t at = inside ? inside->find(mark) : std::string::npos;
  if (at == std::string::npos || at == 0 || at + mark.size() == inside->size()) return false;
  return all_digits(inside->substr(0, at)) && all_digits(inside->substr(at + mark.size()));
}

}  // namespace

std::vector<PartialCheckpoint> remove_partial_checkpoints(const std::string& run_dir) {
  const std::string dir = checkpoint_dir(run_dir);
  std::vector<PartialCheckpoint> removed;
  for (const std::string& name : directory_names(dir)) {
    const auto file = text_between(name, ".", ".tmp");  // write_checkpoint_file's temporary of `file`
    if (!file || (!checkpoint_step_of(*file) && !is_replica_file_name(*file))) continue;
    const std::string path = (fs::path(dir) / name).string();
    if (path_kind(path) != PathKind::kFile) continue;
    const uint64_t bytes = file_size_of(path).value_or(0);
    if (::unlink(path.c_str()) == 0) removed.push_back({path, bytes});  // another worker's unlink: already gone
  }
  return removed;
}

std::string profile_trace_path(const std::string& run_dir, int rank) {
  return (fs::path(run_dir) / "profile" / ("rank" + std::to_string(rank) + ".trace.json")).string();
}

}  // namespace lrkit::train
