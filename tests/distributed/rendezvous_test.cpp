// Joining a c10d group (collective_c10d.cpp): a rendezvous that fails says which rank, where and why.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "gloo_ranks.hpp"
#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {
namespace {

// Nobody hosts the store: LibTorch 1.13 threw its c10d::TimeoutError (a std::runtime_error, no c10::Error) past the
// rendezvous' own message, and a worker said only "The client socket has timed out after 1s while trying to connect".
TEST(Rendezvous, AStoreNobodyHostsFailsNamingTheRankAndTheAddress) {
  DistributedEnv env;
  env.rank = env.local_rank = 1;
  env.world_size = env.local_world_size = 2;
  env.master_port = lrkit::testing::free_loopback_port();
  try {
    make_c10d_collective(env, Backend::gloo, torch::kCPU, std::chrono::seconds(1));
    FAIL() << "joined a group whose store nobody hosts";
  } catch (const std::runtime_error& e) {
    const std::string prefix = "rank 1: rendezvous at " + env.master_addr + ":" + std::to_string(env.master_port) +
                               " with 2 workers failed: ";
    EXPECT_EQ(std::string(e.what()).rfind(prefix, 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find("frame #"), std::string::npos) << "no LibTorch backtrace:\n" << e.what();
  }
}

}  // namespace
}  // namespace lrkit::distributed
