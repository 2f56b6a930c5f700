// The process groups of c10d (their C++ API differs between LibTorch 1.x and
// 2.x; guard such differences here with TORCH_VERSION_MAJOR). The launcher's
// store (launcher_store.cpp) uses only TCPStore, the same in both.
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef LRKIT_WITH_CUDA
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "device_check.hpp"
#include "gloo_endpoint.hpp"
#include "one_backend.hpp"
#include "one_gpu_per_worker.hpp"
#include "start_verdict.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/device_identity.hpp"

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

// What a rendezvous across machines needs that one machine does not: where Gloo would listen on the loopback
// address of this machine's name, that is the likely cause.
std::string several_machines_hint(const GlooEndpoint& endpoint, Backend backend) {
  const std::string host = host_name();
  if (backend == Backend::gloo && endpoint.interfaces.empty() && !host.empty()) {
    const std::string loopback = loopback_address_of(host);
    if (!loopback.empty())
      return " (workers on several machines, but this machine's name '" + host + "' resolves to " +
             loopback + ", a loopback address, where Gloo listens and no other machine can connect: set "
             "GLOO_SOCKET_IFNAME to the interface the machines reach each other on, e.g. eth0)";
  }
  return " (workers on several machines: each must reach MASTER_ADDR, rank 0's machine, and the others' addresses on "
         "the interface named by GLOO_SOCKET_IFNAME, or NCCL_SOCKET_IFNAME for NCCL, else the address the host name "
         "resolves to)";
}

std::string seconds_text(std::chrono::milliseconds duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

// LibTorch's errors carry a 20-frame backtrace in what().
std::string without_backtrace(const std::exception& e) {
  const auto* error = dynamic_cast<const c10::Error*>(&e);
  return error ? error->what_without_backtrace() : e.what();
}

// The store barrier() waits in: the rendezvous store, unless lrkit's own launcher hosts that one. Its workers are to
// stop after their step with a checkpoint when it is killed (its death sends them SIGTERM), but its store dies with
// it, and a barrier there would fail them. Rank 0 then hosts one on the loopback (those workers share a machine),
// whose port the others read from the rendezvous store.
c10::intrusive_ptr<c10d::Store> barrier_store(const DistributedEnv& env, const c10::intrusive_ptr<c10d::Store>& rendezvous,
                                              std::chrono::milliseconds timeout) {
  const bool lrkit_launcher = env.store_hosted_by_launcher && env.store_prefix.empty();
  if (!lrkit_launcher) return rendezvous;
  const std::string key = "lrkit/barrier_store_port";
  c10d::TCPStoreOptions options;
  options.waitWorkers = false;
  options.timeout = timeout;
  if (env.rank == 0) {
    options.port = 0;  // the kernel's choice
    options.isServer = true;
    auto own = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
    const std::string port = std::to_string(own->getPort());
    rendezvous->set(key, std::vector<uint8_t>(port.begin(), port.end()));
    return own;
  }
  const std::vector<uint8_t> port = rendezvous->get(key);
  options.port = static_cast<std::uint16_t>(std::stoi(std::string(port.begin(), port.end())));
  return c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
}

// Rank 0 hosts the rendezvous store unless a launcher does (torchrun's agent, lrkit's own), under the prefix of this
// launch where it gives one.
bool hosts_rendezvous(const DistributedEnv& env) { return env.rank == 0 && !env.store_hosted_by_launcher; }

c10::intrusive_ptr<c10d::Store> rendezvous_store(const DistributedEnv& env, std::chrono::milliseconds timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<std::uint16_t>(env.master_port);
  options.isServer = hosts_rendezvous(env);
  options.numWorkers = static_cast<std::size_t>(env.world_size);
  options.waitWorkers = !env.store_hosted_by_launcher;
  options.timeout = timeout;
  c10::intrusive_ptr<c10d::Store> store = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  if (!env.store_prefix.empty()) store = c10::make_intrusive<c10d::PrefixStore>(env.store_prefix, store);
  return store;
}

using GlooDevices = std::vector<std::shared_ptr<::gloo::transport::Device>>;

GlooDevices make_gloo_devices(const GlooEndpoint& endpoint) {
  if (endpoint.interfaces.empty())
    return {endpoint.loopback ? c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1")
                              : c10d::ProcessGroupGloo::createDefaultDevice()};
  GlooDevices devices;  // gloo_endpoint checked that each interface has an address
  for (const std::string& name : endpoint.interfaces)
    devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(name));
  return devices;
}

class SingleProcess final : public Collective {
 public:
  explicit SingleProcess(torch::Device device) : device_(device) {}
  int rank() const override { return 0; }
  int world_size() const override { return 1; }
  torch::Device device() const override { return device_; }
  void all_reduce_sum(torch::Tensor&) override {}
  void broadcast(torch::Tensor&, int) override {}
  torch::Tensor all_gather(const torch::Tensor& local) override { return local.unsqueeze(0).clone(); }
  void barrier(std::chrono::milliseconds, const std::string&) override {}

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
    // Before the rendezvous waits for the others: a GLOO_SOCKET_IFNAME that cannot serve is refused at once.
    const GlooEndpoint endpoint = backend == Backend::gloo ? gloo_endpoint(env) : GlooEndpoint{};
    const auto gloo_devices = backend == Backend::gloo ? make_gloo_devices(endpoint) : GlooDevices{};
    try {
      const c10::intrusive_ptr<c10d::Store> store = rendezvous_store(env, timeout);
      // Every rank refuses alike; each machine's first worker says why (the only log of its machine that is read),
      // and where the launcher did not say which workers share a machine, every worker does.
      const bool speaks = !env.local_world_size_known || env.local_rank == 0;
      // A rank that refused before it came (share_start_refusal) has said why; these say which rank and why.
      if (const std::string refused = start_verdict(*store, env.rank, env.world_size, "", hosts_rendezvous(env), timeout);
          !refused.empty())
        throw std::invalid_argument(speaks ? refused : "");
      if (const std::string refusal = backend_verdict(*store, env.rank, env.world_size, backend); !refusal.empty())
        throw std::invalid_argument(speaks ? refusal : "");
      barrier_store_ = barrier_store(env, store, timeout);
#ifdef LRKIT_WITH_CUDA
      if (backend == Backend::nccl) {
        const std::string refusal = shared_gpu_verdict(*store, env.rank, env.world_size, physical_gpu(device));
        if (!refusal.empty()) throw std::invalid_argument(speaks ? refusal : "");
        auto options = c10d::ProcessGroupNCCL::Options::create();
        options->timeout = timeout;
        group_ = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, env.rank, env.world_size, options);
        return;
      }
#endif
      // Gloo reduces CUDA tensors too (staged through host memory), so several workers may share one GPU.
      auto options = c10d::ProcessGroupGloo::Options::create(timeout);
      options->devices = gloo_devices;
      options->threads = 2 * static_cast<int>(gloo_devices.size());  // as torch.distributed sizes them
      group_ = c10::make_intrusive<c10d::ProcessGroupGloo>(store, env.rank, env.world_size, options);
    } catch (const std::invalid_argument&) {
      throw;  // a refusal above, in its own words
    } catch (const std::exception& e) {
      // c10::Error, or LibTorch 1.13's c10d errors, which are std::runtime_error: a store that could not be reached in
      // time ("The client socket has timed out") left without the rank, the address or the hint.
      const bool may_span_machines = !env.local_world_size_known || env.world_size > env.local_world_size;
      throw std::runtime_error("rank " + std::to_string(env.rank) + ": rendezvous at " + env.master_addr + ":" +
                               std::to_string(env.master_port) + " with " + std::to_string(env.world_size) +
                               " workers failed: " + without_backtrace(e) +
                               (may_span_machines ? several_machines_hint(endpoint, backend) : ""));
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

  // Through a store, whose waits take a timeout of their own: a process group's operations time out after the
  // group's timeout, however long the caller would wait. The last rank to arrive opens the barrier.
  void barrier(std::chrono::milliseconds timeout, const std::string& waiting_for) override {
    const std::string prefix = "lrkit/barrier/" + std::to_string(barriers_++) + "/";
    const auto start = std::chrono::steady_clock::now();
    try {
      if (barrier_store_->add(prefix + "arrived", 1) == world_size_)
        barrier_store_->set(prefix + "open", std::vector<uint8_t>{1});
      barrier_store_->wait({prefix + "open"}, timeout);
    } catch (const std::exception& e) {  // a timeout, or the store's host gone
      const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
      throw std::runtime_error("rank " + std::to_string(rank_) + ": the wait for " + waiting_for + " failed after " +
                               seconds_text(waited) + " (the limit: " + seconds_text(timeout) + "): " + without_backtrace(e));
    }
  }

 private:
  void wait(const c10::intrusive_ptr<c10d::Work>& work, const char* what) {
    try {
      work->wait(timeout_);
    } catch (const std::exception& e) {
      throw std::runtime_error("rank " + std::to_string(rank_) + ": " + what + " across " +
                               std::to_string(world_size_) + " workers failed (a peer died or hung for more than " +
                               seconds_text(timeout_) + "): " + without_backtrace(e));
    }
  }

  int rank_, world_size_;
  torch::Device device_;
  std::chrono::milliseconds timeout_;
  c10::intrusive_ptr<c10d::Store> barrier_store_;
  c10::intrusive_ptr<BackendGroup> group_;
  int64_t barriers_ = 0;  // every rank calls barrier() as often: the count names each one's keys alike
};

}  // namespace

const char* backend_name(Backend backend) { return backend == Backend::nccl ? "nccl" : "gloo"; }

std::unique_ptr<Collective> make_single_process_collective(torch::Device device) {
  return std::make_unique<SingleProcess>(device);
}

void share_start_refusal(const DistributedEnv& env, const std::string& refusal, std::chrono::milliseconds timeout) {
  try {
    const c10::intrusive_ptr<c10d::Store> store = rendezvous_store(env, timeout);
    start_verdict(*store, env.rank, env.world_size, refusal, hosts_rendezvous(env), timeout);
  } catch (const std::exception&) {
    // The others cannot be reached (they never came, or the store's host is gone): the refusal stands on its own.
  }
}

std::unique_ptr<Collective> make_c10d_collective(const DistributedEnv& env, Backend backend, const torch::Device& device,
                                                 std::chrono::milliseconds timeout) {
  return std::make_unique<C10dCollective>(env, backend, device, timeout);
}

}  // namespace lrkit::distributed
