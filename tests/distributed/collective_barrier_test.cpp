// The barrier where the others wait while one rank works alone: a c10d group's
// operations fail after the group's timeout, its barrier only after its own.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/launcher_store.hpp"

namespace lrkit::distributed {
namespace {

using std::chrono::milliseconds;

// A loopback port free a moment ago, for rank 0 to host the rendezvous store on (as under SLURM or Kubeflow).
int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Runs body(rank, group) for `workers` Gloo ranks (threads) that meet at the rendezvous store on `port`, lrkit's
// launcher's or (launcher_store false) rank 0's own, whose operations time out after `operation_timeout`; returns
// what each threw as std::runtime_error ("" where nothing).
template <typename Body>
std::vector<std::string> on_gloo_ranks(int port, bool launcher_store, int workers, milliseconds operation_timeout, Body body) {
  std::vector<std::string> failures(static_cast<size_t>(workers));
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < workers; ++rank)
    ranks.emplace_back([&, rank] {
      DistributedEnv env;
      env.rank = env.local_rank = rank;
      env.world_size = env.local_world_size = workers;
      env.master_port = port;
      env.store_hosted_by_launcher = launcher_store;
      auto group = make_c10d_collective(env, Backend::gloo, torch::kCPU, operation_timeout);
      try {
        body(rank, *group);
      } catch (const std::runtime_error& e) {
        failures[static_cast<size_t>(rank)] = e.what();
      }
    });
  for (auto& rank : ranks) rank.join();
  return failures;
}

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
  auto group = make_thread_group(3);
  std::vector<std::thread> ranks;
  std::vector<int> passed(3, 0);
  for (int rank = 0; rank < 3; ++rank)
    ranks.emplace_back([&, rank] {
      group[static_cast<size_t>(rank)]->barrier(milliseconds(1), "the others");
      passed[static_cast<size_t>(rank)] = 1;
    });
  for (auto& rank : ranks) rank.join();
  EXPECT_EQ(passed, std::vector<int>(3, 1));
}

}  // namespace
}  // namespace lrkit::distributed
