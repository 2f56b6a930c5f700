// The barrier where the others wait while one rank works alone: a c10d group's
// operations fail after the group's timeout, its barrier only after its own.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "gloo_ranks.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/launcher_store.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::testing::free_loopback_port;
using lrkit::testing::on_gloo_ranks;
using std::chrono::milliseconds;

constexpr milliseconds kOperationTimeout{1000};
constexpr milliseconds kAlone{2500};  // rank 0's work alone, longer than an operation may wait

TEST(CollectiveBarrier, OthersWaitForARankWorkingAloneLongerThanAnOperationMay) {
  // The trouble it solves: in an all-reduce the others give up after the group's timeout.
  const LauncherStore control_store;
  const auto failed = on_gloo_ranks(control_store.port(), true, 2, kOperationTimeout, [](int rank, Collective& group) {
    if (rank == 0) std::this_thread::sleep_for(kAlone);
    auto value = torch::ones({1}, torch::kDouble);
    group.all_reduce_sum(value);
  });
  EXPECT_NE(failed[1].find("rank 1: all-reduce across 2 workers failed (a peer died or hung for more than 1 s): "),
            std::string::npos)
      << failed[1];
  EXPECT_EQ(failed[1].find("frame #"), std::string::npos) << "no LibTorch backtrace in the message:\n" << failed[1];

  const LauncherStore store;
  std::vector<double> sums(3);
  const auto failures = on_gloo_ranks(store.port(), true, 3, kOperationTimeout, [&](int rank, Collective& group) {
    if (rank == 0) std::this_thread::sleep_for(kAlone);
    group.barrier(milliseconds(30000), "rank 0");
    auto value = torch::full({1}, static_cast<double>(rank + 1), torch::kDouble);  // the group still serves
    group.all_reduce_sum(value);
    sums[static_cast<size_t>(rank)] = value.item<double>();
    group.barrier(milliseconds(30000), "a second time");  // each barrier is its own
    group.all_reduce_sum(value);
  });
  EXPECT_EQ(failures, std::vector<std::string>(3, ""));
  EXPECT_EQ(sums, std::vector<double>(3, 6.0));
}

TEST(CollectiveBarrier, AfterItsOwnTimeoutTheWaitIsNamed) {
  const LauncherStore store;
  const auto failures = on_gloo_ranks(store.port(), true, 2, milliseconds(60000), [](int rank, Collective& group) {
    if (rank == 0) std::this_thread::sleep_for(kAlone);
    group.barrier(milliseconds(rank == 0 ? 30000 : 1000), "rank 0 to finish its work");
  });
  EXPECT_EQ(failures[0], "") << "the late rank finds the barrier it opened";
  EXPECT_EQ(failures[1].rfind("rank 1: the wait for rank 0 to finish its work failed after 1 s (the limit: 1 s): ", 0), 0u)
      << failures[1];
}

// A killed `lrkit train --nproc` launcher takes its store along while its workers stop after their step with a
// checkpoint (its death sends them SIGTERM): a barrier there failed them ("Connection reset by peer").
TEST(CollectiveBarrier, OutlivesTheLaunchersStore) {
  auto launcher = std::make_unique<LauncherStore>();
  const auto failures = on_gloo_ranks(launcher->port(), true, 2, kOperationTimeout, [&](int rank, Collective& group) {
    auto value = torch::ones({1}, torch::kDouble);
    group.all_reduce_sum(value);  // every rank has joined
    if (rank == 0) {
      launcher.reset();
      std::this_thread::sleep_for(kAlone);
    }
    group.barrier(milliseconds(30000), "rank 0");
    group.all_reduce_sum(value);
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
}

// Under SLURM, Kubeflow or torchrun the barrier waits in the rendezvous store, which rank 0 or torchrun's agent hosts.
TEST(CollectiveBarrier, WaitsInTheRendezvousStoreWhereRankZeroHostsIt) {
  const auto failures = on_gloo_ranks(free_loopback_port(), false, 2, kOperationTimeout, [](int rank, Collective& group) {
    if (rank == 0) std::this_thread::sleep_for(kAlone);
    group.barrier(milliseconds(30000), "rank 0");
    auto value = torch::ones({1}, torch::kDouble);
    group.all_reduce_sum(value);
  });
  EXPECT_EQ(failures, std::vector<std::string>(2, ""));
}

TEST(CollectiveBarrier, SingleProcessAndThreadGroupsPassIt) {
  make_single_process_collective()->barrier(milliseconds(1), "nobody");
  const auto passed = lrkit::testing::on_thread_ranks<int>(3, [](size_t, Collective& group) {
    group.barrier(milliseconds(1), "the others");
    return 1;
  });
  EXPECT_EQ(passed, std::vector<int>(3, 1));
}

}  // namespace
}  // namespace lrkit::distributed
