#include "lrkit/train/worker_placement.hpp"

#include <stdexcept>
#include <string>

namespace lrkit::train {

GpuView gpu_view(const distributed::DistributedEnv& env) {
  return env.launcher == "slurm" || !env.local_world_size_known ? GpuView::task : GpuView::node;
}

WorkerPlacement place_worker(const TrainConfig& c, int local_rank, int local_workers, int visible_gpus, GpuView view) {
  WorkerPlacement placement;
  const bool cuda = c.train.device == DeviceKind::cuda;
  const bool nccl = c.dist.backend == DistBackend::nccl || (c.dist.backend == DistBackend::auto_ && cuda);
  placement.backend = nccl ? distributed::Backend::nccl : distributed::Backend::gloo;
  if (!cuda) return placement;
  if (visible_gpus < 1)
    throw std::invalid_argument("train.device=cuda but this LibTorch sees no CUDA device (a CPU-only LibTorch, no GPU, "
                                "or CUDA_VISIBLE_DEVICES hides them)");
  if (nccl && view == GpuView::node && local_workers > visible_gpus)
    throw std::invalid_argument(std::to_string(local_workers) + " workers on this node but " + std::to_string(visible_gpus) +
                                " visible GPU(s): NCCL needs one GPU per worker (dist.backend=" + c.dist.backend.text() +
                                "); use at most " + std::to_string(visible_gpus) +
                                " workers, or dist.backend=gloo to share GPUs");
  // Workers that see the node's GPUs take them by local rank; a task bound to GPUs of its own is on a GPU no other
  // task has, whichever of its GPUs it takes (index 0 where it sees one).
  placement.device = torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(local_rank % visible_gpus));
  return placement;
}

WorkerPlacement place_worker(const TrainConfig& c, int local_rank, int local_workers, GpuView view) {
  const int gpus = c.train.device == DeviceKind::cuda ? static_cast<int>(torch::cuda::device_count()) : 0;
  return place_worker(c, local_rank, local_workers, gpus, view);
}

}  // namespace lrkit::train
