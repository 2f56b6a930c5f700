// Whether a CPU run can fit in the machine's memory, checked before it starts.
// A model too large for the memory was killed by the kernel's out-of-memory
// killer while it built its weights: "Killed", exit 137, no message. The check
// refuses only what cannot fit: it counts what a worker certainly holds (the
// weights, gradients and optimizer moments of its models, and the tensors one
// micro-batch's forward pass keeps for backward and the first ones backward
// makes), which is below what it
// measures (bench-free check: the memory_need test compares it with the peak
// resident memory of real runs), against what the machine or its control group
// allows.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>

#include "lrkit/train/gpt_config.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

// What one worker holds at least, in bytes.
struct WorkerMemory {
  int64_t parameters = 0;
  double state_bytes = 0;       // weights, gradients and optimizer moments of every model copy the worker holds
  double gradient_bytes = 0;    // of which the gradients
  double activation_bytes = 0;  // what one micro-batch's forward pass keeps for backward, and backward's first tensors
  // The activations need not sit beside the gradients: LibTorch 2's zero_grad frees them (set_to_none), so a step's
  // forward pass runs before its gradients exist, and the gradients are made as the activations go. Certain is the
  // larger of the two beside the weights and moments (LibTorch 1.13 keeps the gradients: then it holds both).
  double total() const { return state_bytes + std::max(0.0, activation_bytes - gradient_bytes); }
};

// For `config` trained by `world_size` workers (config.validate_world(world_size) holds).
WorkerMemory worker_memory_lower_bound(const TrainConfig& config, int64_t world_size);

// "at least 3.2 GB per worker: 3.2 GB of weights, gradients and optimizer moments, 30 MB of one micro-batch's
// activations (made where the gradients are not yet)" (the progress line of a run).
std::string describe(const WorkerMemory& need);

// What a run's workers may use, in bytes, each bound where it is known.
struct AvailableMemory {
  std::optional<double> machine;        // MemAvailable + SwapFree: for the workers of the machine together
  std::optional<double> control_group;  // the cgroup's memory limit: for them together too (they share the group)
  std::optional<double> per_process;    // the address-space limit (ulimit -v): for each worker, which it also bounds
};

// From /proc/meminfo's text, the cgroup memory limit and the process's address-space limit.
AvailableMemory available_memory(const std::string& meminfo_text, std::optional<double> cgroup_limit,
                                 std::optional<double> address_space_limit);
// The same for this process.
AvailableMemory available_memory();

// One line saying why `local_workers` workers of `need` cannot fit in `available` (each worker against the
// address-space limit, all of them against the smaller of the machine's memory and the cgroup limit), naming
// the keys that set the size; nothing when they may fit.
std::optional<std::string> memory_shortfall(const WorkerMemory& need, int local_workers, const AvailableMemory& available,
                                            const TrainConfig& config);

// Throws std::invalid_argument with memory_shortfall's line for a CPU run that cannot fit in this machine's
// memory (`local_workers` of the `world_size` workers on it). A CUDA run keeps its weights on the GPU, where an
// allocation that fails is an error LibTorch throws, not a kill.
void require_memory(const TrainConfig& config, int64_t world_size, int local_workers);

}  // namespace lrkit::train
