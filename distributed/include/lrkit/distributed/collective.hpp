// The small collective interface the trainer, HDET, the diagnostics and the
// reweighting need. Real runs use torch.distributed's c10d process groups
// (Gloo, or NCCL on CUDA) with a TCPStore rendezvous configured by the
// torchrun variables; a single process gets the trivial implementation.
// Every tensor handed to a collective lives on its device() (NCCL refuses
// host tensors; Gloo takes CUDA tensors too, so workers may share a GPU).
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

namespace lrkit::distributed {

// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT.
struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string launcher;  // "torchrun" (RANK set), "slurm" (SLURM_PROCID set, RANK not) or "" (one process)
  // Who hosts the rendezvous store at master_addr:master_port: rank 0 (false),
  // or the launcher, which the workers join as clients: torchrun's agent
  // (TORCHELASTIC_USE_AGENT_STORE=True; keys under store_prefix) or lrkit's own
  // (LRKIT_LAUNCHER_STORE=1, launcher_store.hpp).
  bool store_hosted_by_launcher = false;
  std::string store_prefix;  // "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>" under torchrun's agent, else ""
};

// Reads torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT), else SLURM's (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID, SLURM_NTASKS_PER_NODE or SLURM_TASKS_PER_NODE; MASTER_ADDR
// is then required when SLURM_NTASKS > 1, MASTER_PORT defaults to 29500);
// none: a single process. The store's host: see DistributedEnv. Throws
// std::invalid_argument naming the variable and its value when one is
// malformed or missing.
DistributedEnv distributed_env_from_environment();

// The c10d backend of a process group.
enum class Backend { gloo, nccl };
const char* backend_name(Backend backend);

class Collective {
 public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Where the tensors of this group's operations must live.
  virtual torch::Device device() const = 0;
  // In place; throws std::runtime_error (naming the operation) on failure or timeout.
  virtual void all_reduce_sum(torch::Tensor& tensor) = 0;
  virtual void broadcast(torch::Tensor& tensor, int root) = 0;
  // Every rank's `local` stacked along a new first dimension: [world_size, ...].
  virtual torch::Tensor all_gather(const torch::Tensor& local) = 0;
};

std::unique_ptr<Collective> make_single_process_collective(torch::Device device = torch::kCPU);
// `ranks` collectives for threads of one process, one per thread (rank i uses
// element i): a real group without sockets, for tests and in-process replicas.
// Every rank must call the same operations in the same order.
std::vector<std::unique_ptr<Collective>> make_thread_group(int ranks, torch::Device device = torch::kCPU);
// Rendezvous through c10d::TCPStore at master_addr:master_port (rank 0 hosts
// it unless a launcher does), then a Gloo or NCCL process group over tensors on `device` (NCCL: a
// CUDA device of this worker's own; throws std::invalid_argument for NCCL on
// the CPU, in a build without CUDA, or when ranks share a physical GPU: rank 0
// names them, the others' message is empty). Every operation fails after `timeout`
// instead of hanging when a peer dies.
std::unique_ptr<Collective> make_c10d_collective(const DistributedEnv& env, Backend backend, const torch::Device& device,
                                                 std::chrono::milliseconds timeout);

}  // namespace lrkit::distributed
