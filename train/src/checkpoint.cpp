#include "lrkit/train/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <functional>
#include <sstream>
#include <vector>

#include "checkpoint_file.hpp"

namespace lrkit::train {

namespace fs = std::filesystem;

namespace {

constexpr int64_t kFormatVersion = 2;  // 2: the payload behind a checksummed header
constexpr int64_t kMaxHdetControllers = 16;  // lr, weight decay, dropout today

void remove_with_replicas(const fs::path& main_file) {
  const std::string prefix = main_file.stem().string() + ".replica_";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(main_file.parent_path(), ec))
    if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path(), ec);
  fs::remove(main_file, ec);
}

void write_hdet_states(torch::serialize::OutputArchive& archive, const std::vector<controllers::HdetState>& states) {
  archive.write("hdet_controllers", c10::IValue(static_cast<int64_t>(states.size())));
  for (size_t i = 0; i < states.size(); ++i) {
    const auto& s = states[i];
    torch::serialize::OutputArchive a;
    a.write("step", c10::IValue(s.step));
    a.write("syncs", c10::IValue(s.syncs));
    a.write("scale", c10::IValue(s.scale));
    a.write("offset", c10::IValue(s.offset));
    a.write("velocity", c10::IValue(s.velocity));
    a.write("delta", c10::IValue(s.delta));
    a.write("window_steps", c10::IValue(s.window_steps));
    a.write("permutation", torch::tensor(s.permutation, torch::kLong));
    a.write("window_loss", torch::tensor(s.window_loss, torch::kDouble));
    archive.write("hdet_" + std::to_string(i), a);
  }
}

void write_loop_state(torch::serialize::OutputArchive& archive, const LoopState& loop) {
  archive.write("skipped_in_a_row", c10::IValue(loop.skipped_in_a_row));
  const std::pair<const char*, const diagnostics::SpikeDetector::State*> detectors[] = {{"loss", &loop.loss_spikes},
                                                                                       {"grad_norm", &loop.grad_norm_spikes}};
  for (const auto& [name, state] : detectors) {
    archive.write(std::string(name) + "_spike_window", torch::tensor(state->window, torch::kDouble));
    archive.write(std::string(name) + "_spikes_in_a_row", c10::IValue(state->spikes_in_a_row));
  }
}

// Each part is absent from checkpoints written before it (the streak before train.skip_limit, the windows before the
// spike policy): it reads as empty.
LoopState read_loop_state(torch::serialize::InputArchive& archive, const std::string& path) {
  LoopState loop;
  c10::IValue value;
  if (archive.try_read("skipped_in_a_row", value)) loop.skipped_in_a_row = value.toInt();
  const std::pair<const char*, diagnostics::SpikeDetector::State*> detectors[] = {{"loss", &loop.loss_spikes},
                                                                                 {"grad_norm", &loop.grad_norm_spikes}};
  for (const auto& [name, state] : detectors) {
    torch::Tensor window;
    if (!archive.try_read(std::string(name) + "_spike_window", window)) continue;
    if (window.dim() != 1 || window.scalar_type() != torch::kDouble || !torch::isfinite(window).all().item<bool>())
      throw CheckpointError("checkpoint '" + path + "' holds a " + name + " spike window that is not finite numbers (corrupt)");
    window = window.contiguous();
    state->window.assign(window.data_ptr<double>(), window.data_ptr<double>() + window.numel());
    if (archive.try_read(std::string(name) + "_spikes_in_a_row", value)) state->spikes_in_a_row = value.toInt();
  }
  return loop;
}

std::vector<controllers::HdetState> read_hdet_states(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue value;
  if (!archive.try_read("hdet_controllers", value)) return {};
  const int64_t count = value.toInt();
  if (count < 0 || count > kMaxHdetControllers)
    throw CheckpointError("checkpoint '" + path + "' holds " + std::to_string(count) + " HDET controller states (corrupt)");
  std::vector<controllers::HdetState> states(static_cast<size_t>(count));
  for (size_t i = 0; i < states.size(); ++i) {
    auto& s = states[i];
    torch::serialize::InputArchive a;
    archive.read("hdet_" + std::to_string(i), a);
    const auto read_int = [&](const char* key) {
      a.read(key, value);
      return value.toInt();
    };
    const auto read_double = [&](const char* key) {
      a.read(key, value);
      return value.toDouble();
    };
    s.step = read_int("step");
    s.syncs = read_int("syncs");
    s.scale = read_double("scale");
    s.offset = read_double("offset");
    s.velocity = read_double("velocity");
    s.delta = read_double("delta");
    s.window_steps = read_int("window_steps");
    torch::Tensor permutation, window_loss;
    a.read("permutation", permutation);
    s.permutation.assign(permutation.data_ptr<int64_t>(), permutation.data_ptr<int64_t>() + permutation.numel());
    a.read("window_loss", window_loss);
    s.window_loss.assign(window_loss.data_ptr<double>(), window_loss.data_ptr<double>() + window_loss.numel());
  }
  return states;
}

SavedCheckpoint write_archive(torch::serialize::OutputArchive& archive, const fs::path& dir, const std::string& name) {
  try {
    const uint32_t crc = write_checkpoint_file(dir, name, [&](const ChunkWriter& write) { archive.save_to(write); });
    return {(dir / name).string(), crc};
  } catch (const c10::Error& e) {
    throw CheckpointError("cannot serialize checkpoint '" + (dir / name).string() + "': " + e.what_without_backtrace());
  }
}

// The model's shape as its config keys: model.heads changes no tensor's shape, so only this record tells a
// checkpoint of 4 heads from one of 2.
struct ShapeKey {
  const char* name;
  int64_t GptConfig::*field;
};
constexpr ShapeKey kShapeKeys[] = {{"model.layers", &GptConfig::layers}, {"model.heads", &GptConfig::heads},
                                   {"model.width", &GptConfig::width},   {"model.context", &GptConfig::context},
                                   {"model.vocab", &GptConfig::vocab}};

void write_model_shape(torch::serialize::OutputArchive& archive, const GptConfig& model) {
  torch::serialize::OutputArchive shape;
  for (const auto& key : kShapeKeys) shape.write(key.name, c10::IValue(model.*key.field));
  archive.write("model_shape", shape);
}

std::string shape_text(torch::IntArrayRef sizes) {
  std::ostringstream text;
  text << sizes;
  return text.str();
}

// Checkpoints written before the explicit attention built its causal mask per call hold it as each attention
// layer's buffer 'mask': it is no weight, and Module::load skips it.
bool is_legacy_attention_mask(const torch::nn::Module& module, const std::string& key) {
  return key == "mask" && dynamic_cast<const CausalSelfAttentionImpl*>(&module) != nullptr;
}

// Module::load puts each saved tensor in place whatever its shape (training then fails far from the cause, or
// runs on) and stops at a missing one with LibTorch's "No such serialized tensor". Compared first, a checkpoint
// of another model is named as one: by its recorded shape, and tensor by tensor for checkpoints without it.
void require_same_model(torch::serialize::InputArchive& archive, const Gpt& model, const std::string& path) {
  const std::string another = "checkpoint '" + path + "' holds another model: ";
  const std::string why = " (a checkpoint resumes, branches or initializes the model shape it was saved with)";
  torch::serialize::InputArchive shape;
  if (archive.try_read("model_shape", shape)) {
    std::string differences;
    c10::IValue value;
    for (const auto& key : kShapeKeys) {
      if (!shape.try_read(key.name, value)) continue;
      const int64_t saved = value.toInt(), configured = model->config().*key.field;
      if (saved != configured)
        differences += (differences.empty() ? "" : ", ") + std::string(key.name) + " = " + std::to_string(saved) +
                       " there, " + std::to_string(configured) + " in this run";
    }
    if (!differences.empty()) throw CheckpointError(another + differences + why);
  }
  torch::serialize::InputArchive saved_model;
  archive.read("model", saved_model);
  const std::function<void(torch::serialize::InputArchive&, const torch::nn::Module&, const std::string&)> compare =
      [&](torch::serialize::InputArchive& saved, const torch::nn::Module& module, const std::string& prefix) {
        const auto compare_tensor = [&](const std::string& key, const torch::Tensor& mine, bool is_buffer) {
          torch::Tensor theirs;
          if (!saved.try_read(key, theirs, is_buffer))
            throw CheckpointError(another + "it has no tensor '" + prefix + key + "'" + why);
          if (theirs.sizes() != mine.sizes())
            throw CheckpointError(another + "'" + prefix + key + "' is " + shape_text(theirs.sizes()) + " there, " +
                                  shape_text(mine.sizes()) + " in this run" + why);
        };
        for (const auto& parameter : module.named_parameters(false)) compare_tensor(parameter.key(), parameter.value(), false);
        for (const auto& buffer : module.named_buffers(false)) compare_tensor(buffer.key(), buffer.value(), true);
        for (const auto& child : module.named_children()) {
          torch::serialize::InputArchive saved_child;
          if (!saved.try_read(child.key(), saved_child))
            throw CheckpointError(another + "it has no module '" + prefix + child.key() + "'" + why);
          compare(saved_child, *child.value(), prefix + child.key() + ".");
        }
        // What the model lacks (a deeper checkpoint's 'blocks.2'), which Module::load would skip: any saved
        // tensor or module by another name. The archive's other attributes ('training') are no weights.
        for (const auto& key : saved.keys()) {
          if (module.named_parameters(false).contains(key) || module.named_buffers(false).contains(key) ||
              module.named_children().contains(key) || is_legacy_attention_mask(module, key))
            continue;
          torch::Tensor tensor;
          torch::serialize::InputArchive child;
          if (saved.try_read(key, tensor) || saved.try_read(key, child))
            throw CheckpointError(another + "it has '" + prefix + key + "', which this run's model lacks" + why);
        }
      };
  compare(saved_model, *model, "");
}

// optim.name of the optimizers the trainer builds (MultiTensorAdamW is an AdamW).
std::string optimizer_name(const torch::optim::Optimizer& optimizer) {
  if (dynamic_cast<const torch::optim::AdamW*>(&optimizer)) return "adamw";
  if (dynamic_cast<const torch::optim::SGD*>(&optimizer)) return "sgd";
  return "another optimizer";
}

// LibTorch fails on another optimizer's state (AdamW's in SGD or SGD's in AdamW) with "INTERNAL ASSERT FAILED
// ... please report a bug to PyTorch": the recorded name refuses it first, and a checkpoint written without the
// record gets LibTorch's failure named as what it is.
void load_optimizer(torch::serialize::InputArchive& archive, torch::optim::Optimizer& optimizer, const std::string& path) {
  c10::IValue saved_name;
  const std::string name = optimizer_name(optimizer);
  if (archive.try_read("optimizer_name", saved_name) && saved_name.toStringRef() != name)
    throw CheckpointError("checkpoint '" + path + "' holds the state of optim.name = " + saved_name.toStringRef() +
                          ", this run's is " + name + " (--init-from starts another optimizer from its weights)");
  torch::serialize::InputArchive optimizer_archive;
  archive.read("optimizer", optimizer_archive);
  try {
    optimizer.load(optimizer_archive);
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path + "' holds optimizer state this run's " + name +
                          " cannot read (another optim.name?): " + e.what_without_backtrace());
  }
}

void write_training_state(torch::serialize::OutputArchive& archive, int64_t step, Gpt& model,
                          torch::optim::Optimizer& optimizer, const std::string& schedule_spec) {
  torch::serialize::OutputArchive model_archive, optimizer_archive;
  write_model_shape(archive, model->config());
  archive.write("optimizer_name", c10::IValue(optimizer_name(optimizer)));
  model->save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("format", c10::IValue(kFormatVersion));
  archive.write("step", c10::IValue(step));
  archive.write("schedule_spec", c10::IValue(schedule_spec));
  archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state());
}

}  // namespace

SavedCheckpoint save_checkpoint(const std::string& run_dir, int64_t keep, const std::vector<int64_t>& pinned, int64_t step, Gpt& model,
                            torch::optim::Optimizer& optimizer, const std::string& schedule_spec, int64_t schedule_steps,
                            const std::vector<controllers::HdetState>& hdet, const LoopState& loop) {
  torch::serialize::OutputArchive archive;
  write_training_state(archive, step, model, optimizer, schedule_spec);
  archive.write("schedule_steps", c10::IValue(schedule_steps));
  if (!hdet.empty()) write_hdet_states(archive, hdet);
  write_loop_state(archive, loop);
  const SavedCheckpoint written = write_archive(archive, checkpoint_dir(run_dir), checkpoint_file_name(step));
  std::vector<fs::path> prunable;
  for (const auto& file : checkpoints_oldest_first(run_dir)) {
    const bool is_pinned = std::any_of(pinned.begin(), pinned.end(), [&](int64_t s) { return file.filename() == checkpoint_file_name(s); });
    if (!is_pinned) prunable.push_back(file);
  }
  for (size_t i = 0; keep > 0 && i + static_cast<size_t>(keep) < prunable.size(); ++i) remove_with_replicas(prunable[i]);
  return written;
}

SavedCheckpoint save_replica_checkpoint(const std::string& run_dir, int64_t step, int64_t replica, Gpt& model,
                                    torch::optim::Optimizer& optimizer, const std::string& schedule_spec) {
  torch::serialize::OutputArchive archive;
  write_training_state(archive, step, model, optimizer, schedule_spec);
  return write_archive(archive, checkpoint_dir(run_dir),
                          fs::path(replica_checkpoint_path(checkpoint_path(run_dir, step), replica)).filename().string());
}

namespace {

// Opens the archive and reads its header (format, step, schedule, HDET states);
// `then` reads more from it. Every failure names the file.
template <typename Then>
CheckpointInfo read_checkpoint(const std::string& path, Then then) {
  const CheckpointFile file(path);
  CheckpointInfo info;
  info.crc32 = file.crc32();
  try {
    torch::serialize::InputArchive archive;
    archive.load_from([&](uint64_t position, void* buffer, size_t size) { return file.read(position, buffer, size); },
                      [&] { return static_cast<size_t>(file.payload_size()); });
    c10::IValue value;
    archive.read("format", value);
    if (value.toInt() != kFormatVersion)
      throw CheckpointError("checkpoint '" + path + "' has format " + std::to_string(value.toInt()) + ", expected " +
                            std::to_string(kFormatVersion));
    archive.read("step", value);
    info.step = value.toInt();
    archive.read("schedule_spec", value);
    info.schedule_spec = value.toStringRef();
    if (archive.try_read("schedule_steps", value)) info.schedule_steps = value.toInt();  // absent in older checkpoints
    info.hdet = read_hdet_states(archive, path);
    info.loop = read_loop_state(archive, path);
    then(archive);
  } catch (const c10::Error& e) {
    throw CheckpointError("checkpoint '" + path + "' is corrupt or truncated: " + e.what_without_backtrace());
  }
  return info;
}

}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  return read_checkpoint(path, [](torch::serialize::InputArchive&) {});
}

CheckpointInfo load_checkpoint(const std::string& path, Gpt& model, torch::optim::Optimizer* optimizer) {
  return read_checkpoint(path, [&](torch::serialize::InputArchive& archive) {
    require_same_model(archive, model, path);
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model->load(model_archive);
    if (optimizer) {
      load_optimizer(archive, *optimizer, path);
      torch::Tensor rng;
      archive.read("rng_cpu", rng);
      at::Generator generator = at::detail::getDefaultCPUGenerator();  // a handle to the global generator
      generator.set_state(rng);
    }
  });
}

}  // namespace lrkit::train
