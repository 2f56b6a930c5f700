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

#include "lrkit/distributed/launcher_environment.hpp"

namespace lrkit::distributed {

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
  // Returns once every rank called it, waiting up to `timeout` rather than an operation's: where the others wait
  // while one rank works alone for longer than a collective may wait (rank 0 evaluating and writing a
  // checkpoint). Throws std::runtime_error naming `waiting_for` ("rank 0 to ...") after `timeout`.
  virtual void barrier(std::chrono::milliseconds timeout, const std::string& waiting_for) = 0;
};

std::unique_ptr<Collective> make_single_process_collective(torch::Device device = torch::kCPU);
// `ranks` collectives for threads of one process, one per thread (rank i uses
// element i): a real group without sockets, for tests and in-process replicas.
// Every rank must call the same operations in the same order.
std::vector<std::unique_ptr<Collective>> make_thread_group(int ranks, torch::Device device = torch::kCPU);
// Rendezvous through c10d::TCPStore at master_addr:master_port (rank 0 hosts
// it unless a launcher does), then a Gloo or NCCL process group over tensors on `device` (NCCL: a
// CUDA device of this worker's own). Throws std::invalid_argument for NCCL on
// the CPU or in a build without CUDA, and on every rank when a rank refused to start
// (share_start_refusal), when the ranks use
// different backends or NCCL ranks share a physical GPU (each machine's first
// worker names them, the others' message is empty). Every operation fails after
// `timeout` instead of hanging when a peer dies.
std::unique_ptr<Collective> make_c10d_collective(const DistributedEnv& env, Backend backend, const torch::Device& device,
                                                 std::chrono::milliseconds timeout);
// A worker of a c10d job that refuses to start before it joins the group (bad input, a run directory held by another
// run, a missing file): tells the others at the rendezvous, where make_c10d_collective then throws
// std::invalid_argument on each ("rank 1 refused to start: <refusal>"; each machine's first worker's message, the
// others' empty) instead of waiting for this rank until `timeout`. Returns once every rank has the verdict, or
// after `timeout` where some never come; a store that cannot be reached is ignored.
void share_start_refusal(const DistributedEnv& env, const std::string& refusal, std::chrono::milliseconds timeout);

}  // namespace lrkit::distributed
