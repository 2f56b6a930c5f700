// The launcher's store: workers that join it as clients form a Gloo group, and
// its port stays taken from the moment it is known.
#include "lrkit/distributed/launcher_store.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gloo_ranks.hpp"
#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {
namespace {

bool can_bind_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int reuse = 1;  // a connection of the ended store in TIME_WAIT does not count; a listener does
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  const sockaddr_in addr = lrkit::testing::loopback_address(port);
  const bool bound = ::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
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
  std::vector<double> sums(3, 0.0);
  const auto failures = lrkit::testing::on_gloo_ranks(store.port(), true, 3, std::chrono::seconds(60), [&](int rank, Collective& group) {
    auto value = torch::full({1}, static_cast<double>(rank + 1), torch::kDouble);
    group.all_reduce_sum(value);
    sums[static_cast<size_t>(rank)] = value.item<double>();
  });
  EXPECT_EQ(failures, std::vector<std::string>(3, ""));
  for (double sum : sums) EXPECT_EQ(sum, 6.0);
}

}  // namespace
}  // namespace lrkit::distributed
