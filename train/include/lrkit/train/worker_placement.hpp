// Where one worker trains and how its process group talks. NCCL (dist.backend
// auto on CUDA, or nccl) needs a GPU of its own per worker on a node; Gloo
// reduces CUDA tensors too, so its workers may share GPUs (worker i on GPU
// i mod count), which lets one GPU run every multi-worker path.
#pragma once

#include <torch/torch.h>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct WorkerPlacement {
  torch::Device device = torch::kCPU;
  distributed::Backend backend = distributed::Backend::gloo;
};

// `local_workers` workers on this node, this one the `local_rank`-th, with
// `visible_gpus` GPUs. Throws std::invalid_argument in one line for
// train.device=cuda without a GPU and for NCCL with more workers than GPUs.
WorkerPlacement place_worker(const TrainConfig& config, int local_rank, int local_workers, int visible_gpus);
// The same with the GPUs this process sees (torch::cuda::device_count()).
WorkerPlacement place_worker(const TrainConfig& config, int local_rank, int local_workers);

}  // namespace lrkit::train
