// Which device and backend each worker gets, and the one-line refusals that
// come before anything starts.
#include <gtest/gtest.h>

#include "lrkit/train/worker_placement.hpp"

namespace lrkit::train {
namespace {

TrainConfig on(const char* device, const char* backend) {
  TrainConfig c;
  c.train.device = device;
  c.dist.backend = backend;
  return c;
}

std::string refusal(const TrainConfig& c, int local_rank, int workers, int gpus) {
  try {
    place_worker(c, local_rank, workers, gpus);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(WorkerPlacement, AutoIsNcclOnCudaWithAGpuPerWorkerAndGlooOnTheCpu) {
  const auto cpu = place_worker(on("cpu", "auto"), 1, 2, 0);
  EXPECT_EQ(cpu.device, torch::Device(torch::kCPU));
  EXPECT_EQ(cpu.backend, distributed::Backend::gloo);
  const auto gpu = place_worker(on("cuda", "auto"), 3, 4, 8);
  EXPECT_EQ(gpu.device, torch::Device(torch::kCUDA, 3));
  EXPECT_EQ(gpu.backend, distributed::Backend::nccl);
}

TEST(WorkerPlacement, GlooWorkersShareGpusRoundRobin) {
  for (int rank = 0; rank < 4; ++rank) {
    const auto p = place_worker(on("cuda", "gloo"), rank, 4, 1);
    EXPECT_EQ(p.device, torch::Device(torch::kCUDA, 0));
    EXPECT_EQ(p.backend, distributed::Backend::gloo);
  }
  EXPECT_EQ(place_worker(on("cuda", "gloo"), 3, 4, 2).device, torch::Device(torch::kCUDA, 1));
}

TEST(WorkerPlacement, TooFewGpusForNcclOrNoneAtAllAreRefusedInOneLine) {
  EXPECT_EQ(refusal(on("cuda", "auto"), 0, 2, 1),
            "2 workers on this node but 1 visible GPU(s): NCCL needs one GPU per worker (dist.backend=auto); use at most 1 "
            "workers, or dist.backend=gloo to share GPUs");
  EXPECT_NE(refusal(on("cuda", "nccl"), 0, 3, 2).find("NCCL needs one GPU per worker (dist.backend=nccl)"), std::string::npos);
  EXPECT_NE(refusal(on("cuda", "gloo"), 0, 2, 0).find("sees no CUDA device"), std::string::npos);
  EXPECT_EQ(refusal(on("cpu", "gloo"), 0, 64, 0), "");
}

// srun --gpus-per-task=1: each of four tasks sees one GPU, its own. Its view cannot refuse (the rendezvous
// compares the physical GPUs), and every task trains on the one GPU it sees.
TEST(WorkerPlacement, SrunTasksWithAGpuOfTheirOwnAreNotRefused) {
  for (int rank = 0; rank < 4; ++rank) {
    const auto p = place_worker(on("cuda", "auto"), rank, 4, 1, GpuView::task);
    EXPECT_EQ(p.device, torch::Device(torch::kCUDA, 0));
    EXPECT_EQ(p.backend, distributed::Backend::nccl);
  }
  // --gpus-per-task=2: tasks 0 and 1 take their first and second GPU, which are two of the node's.
  EXPECT_EQ(place_worker(on("cuda", "nccl"), 0, 4, 2, GpuView::task).device, torch::Device(torch::kCUDA, 0));
  EXPECT_EQ(place_worker(on("cuda", "nccl"), 1, 4, 2, GpuView::task).device, torch::Device(torch::kCUDA, 1));
  // Tasks that see the node's GPUs take theirs by local rank, as in a node view.
  EXPECT_EQ(place_worker(on("cuda", "nccl"), 3, 4, 4, GpuView::task).device, torch::Device(torch::kCUDA, 3));
  EXPECT_EQ(place_worker(on("cuda", "gloo"), 5, 8, 4, GpuView::task).device, torch::Device(torch::kCUDA, 1));
  EXPECT_NE(refusal(on("cuda", "auto"), 0, 4, 1), "");  // the same counts in a node view are refused
}

TEST(WorkerPlacement, SrunTasksAndWorkersOfNodesOfUntoldSizeHaveAViewOfTheirOwn) {
  distributed::DistributedEnv env;
  EXPECT_EQ(gpu_view(env), GpuView::node);  // lrkit's launcher or one process
  env.launcher = "torchrun";
  EXPECT_EQ(gpu_view(env), GpuView::node);
  env.launcher = "slurm";
  EXPECT_EQ(gpu_view(env), GpuView::task);
  // RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob): eight pods of one GPU each are not eight workers on one GPU.
  env.launcher = "torchrun";
  env.world_size = env.local_world_size = 8;
  env.local_world_size_known = false;
  EXPECT_EQ(gpu_view(env), GpuView::task);
  for (int rank = 0; rank < 8; ++rank)
    EXPECT_EQ(place_worker(on("cuda", "auto"), rank, 8, 1, gpu_view(env)).device, torch::Device(torch::kCUDA, 0));
}

TEST(WorkerPlacement, NcclOnTheCpuIsAConfigError) {
  const auto c = on("cpu", "nccl");
  try {
    c.validate();
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("dist.backend=nccl needs train.device=cuda"), std::string::npos) << e.what();
  }
  auto bad = on("cpu", "mpi");
  EXPECT_THROW(bad.validate(), std::invalid_argument);
}

}  // namespace
}  // namespace lrkit::train
