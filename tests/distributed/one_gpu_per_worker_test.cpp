// The rendezvous check that NCCL workers each train on a GPU of their own:
// the verdict over published GPUs, and the exchange through a real c10d store
// by threads as ranks (the GPUs are names here; on CUDA they are host and PCI
// address).
#include <gtest/gtest.h>

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <string>
#include <thread>
#include <vector>

#include "one_gpu_per_worker.hpp"

namespace lrkit::distributed {
namespace {

const std::string kAdvice =
    "NCCL needs a GPU of its own per worker; give each worker one (srun --gpus-per-task=1, or no more workers per node "
    "than GPUs) or set dist.backend=gloo to share GPUs";

TEST(OneGpuPerWorker, DistinctGpusPass) {
  EXPECT_EQ(shared_gpu_refusal({}), "");
  EXPECT_EQ(shared_gpu_refusal({"a 0000:1b:00"}), "");
  // The same bus address on two hosts is two GPUs.
  EXPECT_EQ(shared_gpu_refusal({"a 0000:1b:00", "a 0000:1c:00", "b 0000:1b:00", "b 0000:1c:00"}), "");
}

TEST(OneGpuPerWorker, RanksOnOneGpuAreNamedWithTheGpu) {
  EXPECT_EQ(shared_gpu_refusal({"a 0000:1b:00", "a 0000:1b:00"}), "ranks 0 and 1 train on one GPU (a 0000:1b:00): " + kAdvice);
  // srun -n 4 --gres=gpu:1 on one node: every task sees the node's one GPU.
  EXPECT_EQ(shared_gpu_refusal({"a g", "a g", "a g", "a g"}), "ranks 0, 1, 2 and 3 train on one GPU (a g): " + kAdvice);
  // Of two shared GPUs, the one with the lowest rank is named.
  EXPECT_EQ(shared_gpu_refusal({"a x", "a y", "a z", "a y", "a x"}).substr(0, 37), "ranks 0 and 4 train on one GPU (a x):");
  EXPECT_EQ(shared_gpu_refusal({"a x", "a y", "a z", "a y", "a w"}).substr(0, 37), "ranks 1 and 3 train on one GPU (a y):");
}

std::vector<std::string> verdicts(const std::vector<std::string>& gpus) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  const int world = static_cast<int>(gpus.size());
  std::vector<std::string> out(gpus.size(), "not returned");
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r)
    ranks.emplace_back([&, r] { out[static_cast<std::size_t>(r)] = shared_gpu_verdict(*store, r, world, gpus[static_cast<std::size_t>(r)]); });
  for (auto& rank : ranks) rank.join();
  return out;
}

TEST(OneGpuPerWorker, EveryRankReadsTheSameVerdict) {
  EXPECT_EQ(verdicts({"a 0", "a 1", "b 0", "b 1"}), std::vector<std::string>(4, ""));
  const auto shared = verdicts({"a 0", "a 1", "a 0"});
  EXPECT_EQ(shared, std::vector<std::string>(3, "ranks 0 and 2 train on one GPU (a 0): " + kAdvice));
  EXPECT_EQ(verdicts({"a 0"}), std::vector<std::string>{""});
}

}  // namespace
}  // namespace lrkit::distributed
