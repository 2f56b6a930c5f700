// NCCL needs a GPU of its own per worker. Two ranks on one GPU fail only at
// NCCL's first collective ("Duplicate GPU detected"), with a backtrace, and the
// other ranks wait out the timeout. A node's GPU count cannot tell beforehand
// under srun, which may bind each task to GPUs of its own: a task that sees one
// GPU may be one of four on four GPUs, or four on one. So every rank publishes
// which physical GPU it trains on in the rendezvous store before the NCCL group
// exists; the last rank to arrive compares them and publishes one verdict,
// which every rank reads: all refuse alike, or none does.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>
#include <torch/torch.h>

#include <string>
#include <vector>

namespace lrkit::distributed {

struct PhysicalGpu {
  std::string uuid;   // the device's UUID: equal exactly for one GPU, whatever the machine or the visible devices
  std::string where;  // for people: "node-a 0000:1b:00" (host name, PCI address)
};

#ifdef LRKIT_WITH_CUDA
// The physical GPU behind `device` (device_identity.cpp).
PhysicalGpu physical_gpu(const torch::Device& device);
#endif

// "" when no two of `gpus` (rank r's GPU at r) are one; else one line naming the first GPU that several ranks share
// and those ranks.
std::string shared_gpu_refusal(const std::vector<PhysicalGpu>& gpus);

// The exchange above for the rank `rank` of `world_size` training on `gpu`: returns shared_gpu_refusal over every
// rank's GPU, the same on every rank. Blocks until all ranks arrived (the store's timeout).
std::string shared_gpu_verdict(c10d::Store& store, int rank, int world_size, const PhysicalGpu& gpu);

}  // namespace lrkit::distributed
