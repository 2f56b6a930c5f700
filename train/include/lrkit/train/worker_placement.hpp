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

// What the GPUs one process sees say about its node's. lrkit's launcher and
// torchrun start every worker of a node with one environment, so all see the
// node's GPUs (`node`). srun may bind each task to GPUs of its own
// (--gpus-per-task, --gpu-bind), so a task that sees one GPU may be one of four
// workers on four GPUs (`task`): then only the rendezvous can tell whether NCCL
// workers share a GPU (make_c10d_collective refuses that). So it is where the
// launcher does not say how many workers a node holds (RANK and WORLD_SIZE
// alone, as Kubeflow's PyTorchJob sets them for one worker per pod): the world
// size is no node's count.
enum class GpuView { node, task };
GpuView gpu_view(const distributed::DistributedEnv& env);

// `local_workers` workers on this node, this one the `local_rank`-th, with
// `visible_gpus` GPUs seen as `view`, on GPU local_rank mod visible_gpus.
// Throws std::invalid_argument in one line for
// train.device=cuda without a GPU and, in a node view, for NCCL with more
// workers than GPUs.
WorkerPlacement place_worker(const TrainConfig& config, int local_rank, int local_workers, int visible_gpus,
                             GpuView view = GpuView::node);
// The same with the GPUs this process sees (torch::cuda::device_count()).
WorkerPlacement place_worker(const TrainConfig& config, int local_rank, int local_workers, GpuView view);

}  // namespace lrkit::train
