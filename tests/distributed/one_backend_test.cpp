// The rendezvous check that every worker uses one process-group backend: the
// refusal over published backends, and the exchange through a real c10d store
// by threads as ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "one_backend.hpp"
#include "store_ranks.hpp"

namespace lrkit::distributed {
namespace {

const std::string kAdvice =
    "give every worker the same dist.backend (auto picks nccl where train.device=cuda, gloo on the CPU)";

TEST(OneBackend, OneBackendPasses) {
  EXPECT_EQ(mixed_backends_refusal({}), "");
  EXPECT_EQ(mixed_backends_refusal({"nccl"}), "");
  EXPECT_EQ(mixed_backends_refusal({"gloo", "gloo", "gloo"}), "");
}

TEST(OneBackend, MixedBackendsAreRefusedNamingTheRanksOfEach) {
  EXPECT_EQ(mixed_backends_refusal({"nccl", "gloo"}),
            "the workers use different process-group backends (rank 0 uses nccl; rank 1 uses gloo): " + kAdvice);
  EXPECT_EQ(mixed_backends_refusal({"gloo", "nccl", "gloo", "nccl"}),
            "the workers use different process-group backends (ranks 0, 2 use gloo; ranks 1, 3 use nccl): " + kAdvice);
  // One machine of four (ranks 4 to 7) whose config trains on the CPU under dist.backend=auto.
  EXPECT_EQ(mixed_backends_refusal({"nccl", "nccl", "nccl", "nccl", "gloo", "gloo", "gloo", "gloo", "nccl"}),
            "the workers use different process-group backends (ranks 0, 1, 2, 3, 8 use nccl; ranks 4, 5, 6, 7 use "
            "gloo): " + kAdvice);
  // 256 ranks stay one readable line.
  std::vector<std::string> many(256, "nccl");
  many[0] = "gloo";
  EXPECT_EQ(mixed_backends_refusal(many),
            "the workers use different process-group backends (rank 0 uses gloo; ranks 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, "
            "11, 12, 13, 14, 15, 16 and 239 more use nccl): " + kAdvice);
}

TEST(OneBackend, EveryRankReadsTheSameVerdict) {
  const auto verdicts = [](const std::vector<Backend>& backends) {
    const int world = static_cast<int>(backends.size());
    return lrkit::testing::on_store_ranks(world, [&](int rank, c10d::Store& store) {
      return backend_verdict(store, rank, world, backends[static_cast<std::size_t>(rank)]);
    });
  };
  EXPECT_EQ(verdicts({Backend::gloo, Backend::gloo, Backend::gloo}), std::vector<std::string>(3, ""));
  EXPECT_EQ(verdicts({Backend::nccl, Backend::nccl, Backend::gloo}),
            std::vector<std::string>(3, "the workers use different process-group backends (ranks 0, 1 use nccl; "
                                        "rank 2 uses gloo): " + kAdvice));
}

}  // namespace
}  // namespace lrkit::distributed
