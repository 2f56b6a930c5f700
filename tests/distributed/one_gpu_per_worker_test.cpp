// The rendezvous check that NCCL workers each train on a GPU of their own:
// the verdict over published GPUs, and the exchange through a real c10d store
// by threads as ranks (the GPUs are made-up UUIDs here; on CUDA, the devices'
// own, shown by host name and PCI address).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "one_gpu_per_worker.hpp"
#include "store_ranks.hpp"

namespace lrkit::distributed {
namespace {

const std::string kAdvice =
    "NCCL needs a GPU of its own per worker; give each worker one (srun --gpus-per-task=1, or no more workers per node "
    "than GPUs) or set dist.backend=gloo to share GPUs";

// A GPU by its UUID and where it is; ranks on one GPU see the same UUID.
PhysicalGpu gpu(const std::string& uuid, const std::string& where) { return {uuid, where}; }

TEST(OneGpuPerWorker, DistinctGpusPass) {
  EXPECT_EQ(shared_gpu_refusal({}), "");
  EXPECT_EQ(shared_gpu_refusal({gpu("u0", "a 0000:1b:00")}), "");
  // Two machines' GPUs at the same PCI address, even under one host name (containers), are two GPUs.
  EXPECT_EQ(shared_gpu_refusal({gpu("u0", "a 0000:1b:00"), gpu("u1", "a 0000:1c:00"), gpu("u2", "a 0000:1b:00"),
                                gpu("u3", "a 0000:1c:00")}),
            "");
}

TEST(OneGpuPerWorker, RanksOnOneGpuAreNamedWithTheGpu) {
  EXPECT_EQ(shared_gpu_refusal({gpu("u0", "a 0000:1b:00"), gpu("u0", "a 0000:1b:00")}),
            "ranks 0, 1 train on one GPU (a 0000:1b:00): " + kAdvice);
  // srun -n 4 --gres=gpu:1 on one node: every task sees the node's one GPU.
  EXPECT_EQ(shared_gpu_refusal({gpu("g", "a g"), gpu("g", "a g"), gpu("g", "a g"), gpu("g", "a g")}),
            "ranks 0, 1, 2, 3 train on one GPU (a g): " + kAdvice);
  // Of two shared GPUs, the one with the lowest rank is named.
  EXPECT_EQ(shared_gpu_refusal({gpu("x", "a x"), gpu("y", "a y"), gpu("z", "a z"), gpu("y", "a y"), gpu("x", "a x")})
                .substr(0, 34),
            "ranks 0, 4 train on one GPU (a x):");
  EXPECT_EQ(shared_gpu_refusal({gpu("x", "a x"), gpu("y", "a y"), gpu("z", "a z"), gpu("y", "a y"), gpu("w", "a w")})
                .substr(0, 34),
            "ranks 1, 3 train on one GPU (a y):");
}

TEST(OneGpuPerWorker, ManyRanksOnOneGpuAreListedUpToSixteen) {
  // srun -n 40 --gres=gpu:1: one line, not forty rank numbers.
  const std::vector<PhysicalGpu> gpus(40, gpu("g", "a g"));
  EXPECT_EQ(shared_gpu_refusal(gpus),
            "ranks 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 and 24 more train on one GPU (a g): " + kAdvice);
}

std::vector<std::string> verdicts(const std::vector<PhysicalGpu>& gpus) {
  return lrkit::testing::on_store_ranks(static_cast<int>(gpus.size()), [&](int rank, c10d::Store& store) {
    return shared_gpu_verdict(store, rank, static_cast<int>(gpus.size()), gpus[static_cast<std::size_t>(rank)]);
  });
}

TEST(OneGpuPerWorker, EveryRankReadsTheSameVerdict) {
  EXPECT_EQ(verdicts({gpu("u0", "a 0"), gpu("u1", "a 1"), gpu("u2", "b 0"), gpu("u3", "b 1")}), std::vector<std::string>(4, ""));
  EXPECT_EQ(verdicts({gpu("u0", "a 0"), gpu("u1", "a 1"), gpu("u0", "a 0")}),
            std::vector<std::string>(3, "ranks 0, 2 train on one GPU (a 0): " + kAdvice));
  EXPECT_EQ(verdicts({gpu("u0", "a 0")}), std::vector<std::string>{""});
  // A UUID and where its GPU is travel in one value: a line break in the second is kept.
  EXPECT_EQ(verdicts({gpu("u0", "a\n0"), gpu("u0", "a\n0")}),
            std::vector<std::string>(2, "ranks 0, 1 train on one GPU (a\n0): " + kAdvice));
}

}  // namespace
}  // namespace lrkit::distributed
