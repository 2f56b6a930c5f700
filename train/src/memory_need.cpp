#include "lrkit/train/memory_need.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "lrkit/common/numbers.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/train/cgroup_limits.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/model_flops.hpp"

namespace lrkit::train {

namespace {

// "4.83B", "25.3M", "7664": a model's size as one says it.
std::string count_text(int64_t count) {
  char buf[32];
  const auto value = static_cast<double>(count);
  if (value >= 1e12)
    std::snprintf(buf, sizeof buf, "%.3g", value);
  else if (value >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3gB", value / 1e9);
  else if (value >= 1e6)
    std::snprintf(buf, sizeof buf, "%.3gM", value / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(count));
  return buf;
}

std::optional<double> meminfo_bytes(const std::string& meminfo_text, const std::string& field) {
  std::istringstream in(meminfo_text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) != 0) continue;
    std::istringstream values(line.substr(field.size() + 1));
    double kib = 0;
    std::string unit;
    if (values >> kib >> unit && unit == "kB" && kib >= 0) return kib * 1024.0;
    return std::nullopt;
  }
  return std::nullopt;
}

// SGD keeps a momentum buffer per parameter once its momentum is not 0 (a cycled one: where max_momentum is not).
bool sgd_momentum_buffer(const OptimConfig& o) {
  return o.cycle_momentum ? o.max_momentum != 0.0 : o.momentum != 0.0;
}

}  // namespace

WorkerMemory worker_memory_lower_bound(const TrainConfig& c, int64_t world_size) {
  WorkerMemory need;
  need.parameters = parameter_count(c.model);
  const double p = static_cast<double>(need.parameters), fp32 = 4.0;
  const double moments = c.optim.name == OptimizerName::adamw ? 2.0 : (sgd_momentum_buffer(c.optim) ? 1.0 : 0.0);
  const double models = static_cast<double>(c.replicas_per_rank());
  need.gradient_bytes = models * p * fp32;
  need.state_bytes = need.gradient_bytes * (2.0 + moments);  // weights, gradients, moments
  if (!c.hdet_replicas_identical()) need.state_bytes += p * fp32;  // the replicas' mean model
  // Kept for backward, per token of a layer: the LayerNorm outputs the linears read (2w), q, k and v (3w), the
  // attention output the projection reads (w), the MLP's input to GELU and GELU's output (8w); explicit attention
  // also keeps its softmax ([heads, T] per token). Then the output's log-softmax (vocab per token). On top, while
  // backward starts, the gradient of the logits, or later, of the last layer's explicit attention one more
  // score-sized tensor (the softmax's output gradient; LibTorch 1.13 also holds its input gradient then, 2.11 not
  // at its peak). Each element at least 2 bytes under bf16 autocast, else 4.
  const double rows = static_cast<double>(c.train.batch / (world_size * c.replicas_per_rank()) / c.train.accumulation);
  const double tokens = rows * static_cast<double>(c.model.context);
  const bool explicit_scores = !fused_attention(c.model);
  const double scores_per_token = explicit_scores ? static_cast<double>(c.model.heads * c.model.context) : 0.0;
  const double kept_per_token =
      static_cast<double>(c.model.layers) * (14.0 * static_cast<double>(c.model.width) + scores_per_token) +
      static_cast<double>(c.model.vocab);
  const double backward_per_token = std::max(static_cast<double>(c.model.vocab), scores_per_token);
  const double element = c.train.precision == Precision::bf16 ? 2.0 : fp32;
  need.activation_bytes = tokens * (kept_per_token + backward_per_token) * element;
  return need;
}

std::string describe(const WorkerMemory& need) {
  return "at least " + bytes_text(need.total()) + " per worker: " + bytes_text(need.state_bytes) +
         " of weights, gradients and optimizer moments, " + bytes_text(need.activation_bytes) +
         " of one micro-batch's activations (made where the gradients are not yet)";
}

AvailableMemory available_memory(const std::string& meminfo_text, std::optional<double> cgroup_limit,
                                 std::optional<double> address_space_limit) {
  AvailableMemory available{std::nullopt, cgroup_limit, address_space_limit};
  if (const auto free = meminfo_bytes(meminfo_text, "MemAvailable"))
    available.machine = *free + meminfo_bytes(meminfo_text, "SwapFree").value_or(0.0);
  return available;
}

AvailableMemory available_memory() {
  std::string meminfo;
  try {
    meminfo = read_text("/proc/meminfo");
  } catch (const std::runtime_error&) {  // no /proc: the limits alone, if any
  }
  struct rlimit limit {};
  std::optional<double> address_space;
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
    address_space = static_cast<double>(limit.rlim_cur);
  return available_memory(meminfo, cgroup_memory_limit(), address_space);
}

std::optional<std::string> memory_shortfall(const WorkerMemory& need, int local_workers, const AvailableMemory& available,
                                            const TrainConfig& c) {
  const double total = need.total() * static_cast<double>(local_workers);
  std::string line;
  const bool each_worker = available.per_process && need.total() > *available.per_process;
  if (each_worker) {
    line = "the run needs at least " + bytes_text(need.total()) + " of memory" + (local_workers > 1 ? " per worker" : "") +
           " but the address-space limit (ulimit -v) allows " + bytes_text(*available.per_process);
  } else {
    std::optional<double> shared = available.machine;
    std::string source = "this machine has " + bytes_text(shared.value_or(0)) + " available (MemAvailable + SwapFree)";
    if (available.control_group && (!shared || *available.control_group < *shared)) {
      shared = available.control_group;
      source = "the control group's memory limit allows " + bytes_text(*shared);
    }
    if (!shared || total <= *shared) return std::nullopt;
    line = "the run needs at least " + bytes_text(total) + " of memory";
    if (local_workers > 1)
      line += " (" + std::to_string(local_workers) + " workers on this machine, each at least " + bytes_text(need.total()) + ")";
    line += " but " + source;
  }
  const std::string held = c.optim.name == OptimizerName::adamw ? "weights, gradients and AdamW's two moments"
                           : sgd_momentum_buffer(c.optim)           ? "weights, gradients and SGD's momentum"
                                                                    : "weights and gradients";
  line += ": " + count_text(need.parameters) + " parameters";
  if (c.replicas_per_rank() > 1)
    line += " in each of a worker's " + std::to_string(c.replicas_per_rank()) + " model copies (hdet.replicas_per_rank)";
  line += " hold " + bytes_text(need.state_bytes) + " in " + held + ", and one micro-batch's activations at least " +
          bytes_text(need.activation_bytes) + "; ";
  line += need.state_bytes >= need.activation_bytes
              ? "lower model.width or model.layers" + std::string(c.replicas_per_rank() > 1 ? " or hdet.replicas_per_rank" : "") +
                    std::string(local_workers > 1 && !each_worker ? ", or use fewer workers" : "")
              : "raise train.accumulation (smaller micro-batches, the same result) or lower train.batch or model.context";
  return line;
}

void require_memory(const TrainConfig& c, int64_t world_size, int local_workers) {
  if (c.train.device != DeviceKind::cpu) return;
  if (const auto shortfall = memory_shortfall(worker_memory_lower_bound(c, world_size), local_workers, available_memory(), c))
    throw std::invalid_argument(*shortfall);
}

}  // namespace lrkit::train
