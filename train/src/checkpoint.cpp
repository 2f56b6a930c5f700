#include "lrkit/train/checkpoint.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

namespace lrkit::train {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kFormatVersion = 1;

fs::path checkpoint_dir(const std::string& run_dir) { return fs::path(run_dir) / "checkpoints"; }

std::string file_name(int64_t step) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "step_%010lld.pt", static_cast<long long>(step));
  return buf;
}

void fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) throw CheckpointError("cannot open '" + path.string() + "' to sync it");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw CheckpointError("fsync of '" + path.string() + "' failed");
}

std::vector<fs::path> checkpoints_oldest_first(const std::string& run_dir) {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(checkpoint_dir(run_dir), ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step_", 0) == 0 && entry.path().extension() == ".pt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());  // zero-padded steps sort by name
  return files;
}

}  // namespace

std::string save_checkpoint(const std::string& run_dir, int64_t keep, int64_t step, Gpt& model,
                            torch::optim::Optimizer& optimizer, const std::string& schedule_spec) {
  const fs::path dir = checkpoint_dir(run_dir);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointError("cannot create checkpoint directory '" + dir.string() + "': " + ec.message());

  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  model->save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("format", c10::IValue(kFormatVersion));
  archive.write("step", c10::IValue(step));
  archive.write("schedule_spec", c10::IValue(schedule_spec));
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state());

  const fs::path final_path = dir / file_name(step);
  const fs::path temporary = dir / ("." + file_name(step) + ".tmp");
  try {
    archive.save_to(temporary.string());
  } catch (const c10::Error& e) {
    throw CheckpointError("cannot write checkpoint '" + temporary.string() + "': " + e.what_without_backtrace());
  }
  fsync_path(temporary, O_RDONLY);
  fs::rename(temporary, final_path, ec);
  if (ec) throw CheckpointError("cannot rename '" + temporary.string() + "': " + ec.message());
  fsync_path(dir, O_RDONLY | O_DIRECTORY);

  auto files = checkpoints_oldest_first(run_dir);
  for (size_t i = 0; keep > 0 && i + static_cast<size_t>(keep) < files.size(); ++i) fs::remove(files[i], ec);
  return final_path.string();
}

std::optional<std::string> latest_checkpoint(const std::string& run_dir) {
  const auto files = checkpoints_oldest_first(run_dir);
  if (files.empty()) return std::nullopt;
  return files.back().string();
}

CheckpointInfo load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer* optimizer) {
  if (!fs::exists(path)) throw CheckpointError("checkpoint '" + path + "' does not exist");
  CheckpointInfo info;
  try {
    torch::serialize::InputArchive archive, model_archive;
    archive.load_from(path);
    c10::IValue value;
    archive.read("format", value);
    if (value.toInt() != kFormatVersion)
      throw CheckpointError("checkpoint '" + path + "' has format " + std::to_string(value.toInt()) + ", expected " +
                            std::to_string(kFormatVersion));
    archive.read("step", value);
    info.step = value.toInt();
    archive.read("schedule_spec", value);
    info.schedule_spec = value.toStringRef();
    archive.read("model", model_archive);
    model->load(model_archive);
    if (optimizer) {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
      torch::Tensor rng;
      archive.read("rng_cpu", rng);
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle to the global generator
      generator.set_state(rng);
    }
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path + "' is corrupt or truncated: " + e.what_without_backtrace());
  }
  return info;
}

}  // namespace lrkit::train
