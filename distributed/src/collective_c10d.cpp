// The process groups of c10d (their C++ API differs between LibTorch 1.x and
// 2.x; guard such differences here with TORCH_VERSION_MAJOR). The launcher's
// store (launcher_store.cpp) uses only TCPStore, the same in both.
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef LRKIT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "device_check.hpp"
#include "one_gpu_per_worker.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/launcher_store.hpp"

namespace lrkit::distributed {

namespace {

// LibTorch 2 split the process group into a dispatching ProcessGroup and the
// per-backend c10d::Backend that ProcessGroupGloo and ProcessGroupNCCL derive
// from; 1.x's backends derive from ProcessGroup itself. Both expose the same
// allreduce, broadcast and allgather.
#if TORCH_VERSION_MAJOR >= 2
using BackendGroup = c10d::Backend;
#else
using BackendGroup = c10d::ProcessGroup;
#endif

int int_from_env(const char* name, int fallback, int min_value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < min_value || value > 1 << 20)
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + text +
                                "' is not an integer >= " + std::to_string(min_value));
  return static_cast<int>(value);
}

#ifdef LRKIT_WITH_CUDA
// The physical GPU behind `device`: CUDA's indices differ between processes that see different GPUs (srun binds
// tasks to GPUs of their own), its UUID does not.
PhysicalGpu physical_gpu(const torch::Device& device) {
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(device.index());
  std::string uuid;
  for (const char byte : properties->uuid.bytes) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", static_cast<unsigned>(static_cast<unsigned char>(byte)));
    uuid += hex.data();
  }
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) host[0] = '\0';
  std::array<char, 32> bus{};
  std::snprintf(bus.data(), bus.size(), "%04x:%02x:%02x", properties->pciDomainID, properties->pciBusID,
                properties->pciDeviceID);
  return {uuid, std::string(host.data()) + " " + bus.data()};
}
#endif

class SingleProcess final : public Collective {
 public:
  explicit SingleProcess(torch::Device device) : device_(device) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  torch::Device device() const override { return device_; }
  void all_reduce_sum(torch::Tensor&) override {}
  void broadcast(torch::Tensor&, int) override {}
  torch::Tensor all_gather(const torch::Tensor& local) override { return local.unsqueeze(0).clone(); }

 private:
  torch::Device device_;
};

class C10dCollective final : public Collective {
 public:
  C10dCollective(const DistributedEnv& env, Backend backend, const torch::Device& device, std::chrono::milliseconds timeout)
      : rank_(env.rank), world_size_(env.world_size), device_(device), timeout_(timeout) {
    if (backend == Backend::nccl && !device.is_cuda())
      throw std::invalid_argument("the NCCL backend needs CUDA tensors (train.device=cuda); on the CPU use gloo");
#ifndef LRKIT_WITH_CUDA
    if (backend == Backend::nccl)
      throw std::invalid_argument("this lrkit was built without CUDA, so without NCCL: rebuild against a CUDA LibTorch "
                                  "(LRKIT_WITH_CUDA) or use dist.backend=gloo");
#endif
    c10d::TCPStoreOptions store_options;
    store_options.port = static_cast<std::uint16_t>(env.master_port);
    store_options.isServer = env.rank == 0 && !env.store_hosted_by_launcher;
    store_options.numWorkers = static_cast<std::size_t>(env.world_size);
    store_options.waitWorkers = !env.store_hosted_by_launcher;
    store_options.timeout = timeout;
    try {
      c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, store_options);
      if (!env.store_prefix.empty()) store = c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, store);
#ifdef LRKIT_WITH_CUDA
      if (backend == Backend::nccl) {
        const std::string refusal = shared_gpu_verdict(*store, env.rank, env.world_size, physical_gpu(device));
        if (!refusal.empty()) throw std::invalid_argument(env.rank == 0 ? refusal : "");  // rank 0 speaks for all
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
        return;
      }
#endif
      // Gloo reduces CUDA tensors too (staged through host memory), so several workers may share one GPU.
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
    } catch (const c10::Error& e) {
      throw std::runtime_error("rank " + std::to_string(env.rank) + ": rendezvous at " + env.master_addr + ":" +
                               std::to_string(env.master_port) + " with " + std::to_string(env.world_size) +
                               " workers failed: " + e.what_without_backtrace());
    }
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_size_; }
  torch::Device device() const override { return device_; }

  void all_reduce_sum(torch::Tensor& tensor) override {
    check_device(*this, tensor, "all-reduce");
    std::vector<torch::Tensor> tensors = {tensor};
    wait(group_->allreduce(tensors), "all-reduce");
  }

  void broadcast(torch::Tensor& tensor, int root) override {
    check_device(*this, tensor, "broadcast");
    std::vector<torch::Tensor> tensors = {tensor};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    wait(group_->broadcast(tensors, options), "broadcast");
  }

  torch::Tensor all_gather(const torch::Tensor& local) override {
    check_device(*this, local, "all-gather");
    std::vector<torch::Tensor> input = {local.contiguous()};
    std::vector<std::vector<torch::Tensor>> output(1);
    for (int r = 0; r < world_size_; ++r) output[0].push_back(torch::empty_like(input[0]));
    wait(group_->allgather(output, input), "all-gather");
    return torch::stack(output[0]);
  }

 private:
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
    try {
      work->wait(timeout_);
    } catch (const std::exception& e) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": " + what + " across " +
                               std::to_string(world_size_) + " workers failed (a peer died or hung for more than " +
                               std::to_string(timeout_.count() / 1000) + " s): " + e.what());
    }
  }

  int rank_, world_size_;
  torch::Device device_;
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<BackendGroup> group_;
};

}  // namespace

namespace {

bool has_env(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0';
}

// SLURM_TASKS_PER_NODE reads like "4(x2),3": this node's count is not knowable
// from it alone, so only a uniform first entry is taken.
int slurm_tasks_per_node(int world_size) {
  if (has_env("SLURM_NTASKS_PER_NODE")) return int_from_env("SLURM_NTASKS_PER_NODE", world_size, 1);
  if (!has_env("SLURM_TASKS_PER_NODE")) return world_size;
  const std::string text = std::getenv("SLURM_TASKS_PER_NODE");
  char* end = nullptr;
  const long value = std::strtol(text.c_str(), &end, 10);
  if (end == text.c_str() || value < 1) throw std::invalid_argument("environment variable SLURM_TASKS_PER_NODE='" + text + "' is malformed");
  return static_cast<int>(value);
}

}  // namespace

DistributedEnv distributed_env_from_environment() {
  DistributedEnv env;
  if (!has_env("RANK") && has_env("SLURM_PROCID")) {  // srun: one task per worker
    env.launcher = "slurm";
    env.world_size = int_from_env("SLURM_NTASKS", 1, 1);
    env.rank = int_from_env("SLURM_PROCID", 0, 0);
    env.local_rank = int_from_env("SLURM_LOCALID", 0, 0);
    env.local_world_size = slurm_tasks_per_node(env.world_size);
    if (env.world_size > 1 && !has_env("MASTER_ADDR"))
      throw std::invalid_argument("SLURM_NTASKS=" + std::to_string(env.world_size) +
                                  " but MASTER_ADDR is unset: export MASTER_ADDR=$(scontrol show hostnames "
                                  "\"$SLURM_JOB_NODELIST\" | head -n1) in the batch script, and start the "
                                  "workers with srun (the batch script's own process is one task, not " +
                                  std::to_string(env.world_size) + ")");
  } else {
    env.launcher = has_env("RANK") ? "torchrun" : "";
    env.world_size = int_from_env("WORLD_SIZE", 1, 1);
    env.rank = int_from_env("RANK", 0, 0);
    env.local_rank = int_from_env("LOCAL_RANK", env.rank, 0);
    env.local_world_size = int_from_env("LOCAL_WORLD_SIZE", env.world_size, 1);
  }
  env.master_port = int_from_env("MASTER_PORT", 29500, 1);
  if (const char* addr = std::getenv("MASTER_ADDR"); addr != nullptr && *addr != '\0') env.master_addr = addr;
  if (env.rank >= env.world_size)
    throw std::invalid_argument("RANK=" + std::to_string(env.rank) + " is not below WORLD_SIZE=" +
                                std::to_string(env.world_size));
  if (env.master_port > 65535) throw std::invalid_argument("MASTER_PORT=" + std::to_string(env.master_port) + " is not a port");
  // torchrun's agent hosts the store on MASTER_PORT, its keys under the prefix PyTorch's env:// rendezvous uses.
  if (const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE"); agent != nullptr && std::string(agent) == "True") {
    env.store_hosted_by_launcher = true;
    env.store_prefix = "/worker/attempt_" + std::to_string(int_from_env("TORCHELASTIC_RESTART_COUNT", 0, 0));
  } else if (const char* lrkit = std::getenv(kLauncherStoreVariable); lrkit != nullptr && std::string(lrkit) == "1") {
    env.store_hosted_by_launcher = true;
  }
  return env;
}

const char* backend_name(Backend backend) { return backend == Backend::nccl ? "nccl" : "gloo"; }

std::unique_ptr<Collective> make_single_process_collective(torch::Device device) {
  return std::make_unique<SingleProcess>(device);
}

std::unique_ptr<Collective> make_c10d_collective(const DistributedEnv& env, Backend backend, const torch::Device& device,
                                                 std::chrono::milliseconds timeout) {
  return std::make_unique<C10dCollective>(env, backend, device, timeout);
}

}  // namespace lrkit::distributed
