// The launcher's store: workers that join it as clients form a Gloo group, and
// its port stays taken from the moment it is known.
#include "lrkit/distributed/launcher_store.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <thread>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {
namespace {

bool can_bind_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int reuse = 1;  // a connection of the ended store in TIME_WAIT does not count; a listener does
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return bound;
}

TEST(LauncherStore, HoldsItsPortUntilItEnds) {
  int port = 0;
  {
    const LauncherStore store;
    port = store.port();
    ASSERT_GT(port, 0);
    EXPECT_FALSE(can_bind_loopback(port)) << "no other process may take the workers' port";
  }
  EXPECT_TRUE(can_bind_loopback(port));
}

TEST(LauncherStore, WorkersJoiningItFormAGlooGroup) {
  const LauncherStore store;
  constexpr int kWorkers = 3;
  std::vector<double> sums(kWorkers, 0.0);
  std::vector<std::thread> workers;
  for (int rank = 0; rank < kWorkers; ++rank)
    workers.emplace_back([&, rank] {
      DistributedEnv env;
      env.rank = env.local_rank = rank;
      env.world_size = env.local_world_size = kWorkers;
      env.master_port = store.port();
      env.store_hosted_by_launcher = true;
      auto group = make_c10d_collective(env, Backend::gloo, torch::kCPU, std::chrono::seconds(60));
      auto value = torch::full({1}, static_cast<double>(rank + 1), torch::kDouble);
      group->all_reduce_sum(value);
      sums[rank] = value.item<double>();
    });
  for (auto& worker : workers) worker.join();
  for (double sum : sums) EXPECT_EQ(sum, 6.0);
}

}  // namespace
}  // namespace lrkit::distributed
