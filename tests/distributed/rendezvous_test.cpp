// Joining a c10d group (collective_c10d.cpp): a rendezvous that fails says which rank, where and why, and a worker that
// refuses to start says so to the others there.
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

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

// A worker that refuses to start before it joins (rank 0's run directory held by another run, a file one machine
// lacks) tells the others at the rendezvous: they refuse at once naming it, where they waited for it until their
// timeout and failed with "The client socket has timed out". Threads as 3 ranks; each machine's first worker (ranks 0
// and 2 here, 2 workers a machine) says it, the others' message is empty.
TEST(Rendezvous, AWorkerThatRefusesToStartStopsTheOthersAtOnceNamingIt) {
  for (const int refusing : {0, 1}) {
    const int port = lrkit::testing::free_loopback_port();
    const auto outcomes = lrkit::testing::on_threads<std::string>(3, [&](size_t r) {
      DistributedEnv env;
      env.rank = static_cast<int>(r);
      env.local_rank = env.rank % 2;
      env.world_size = 3;
      env.local_world_size = 2;
      env.local_world_size_known = true;
      env.master_port = port;
      if (env.rank != 0) lrkit::testing::wait_until_listening(port, std::chrono::seconds(60));
      const auto timeout = std::chrono::seconds(60);  // the others come at once: nobody waits it out
      if (env.rank == refusing) {
        share_start_refusal(env, "data file 'corpus.txt' does not exist", timeout);
        return std::string("shared");
      }
      try {
        make_c10d_collective(env, Backend::gloo, torch::kCPU, timeout);
        return std::string("joined a group whose rank " + std::to_string(refusing) + " refused");
      } catch (const std::invalid_argument& e) {
        return "refused: " + std::string(e.what());
      } catch (const std::runtime_error& e) {
        return "failed: " + std::string(e.what());
      }
    });
    const std::string named = "refused: rank " + std::to_string(refusing) + " refused to start: data file 'corpus.txt' does not exist";
    const std::vector<std::string> expected =
        refusing == 0 ? std::vector<std::string>{"shared", "refused: ", named} : std::vector<std::string>{named, "shared", named};
    EXPECT_EQ(outcomes, expected) << "rank " << refusing << " refusing";
  }
}

// Where nobody comes, a refusal is not held up beyond the timeout, and no error of the store's escapes.
TEST(Rendezvous, ARefusalNobodyHearsReturnsAfterTheTimeout) {
  DistributedEnv env;
  env.rank = 1;
  env.world_size = 2;
  env.master_port = lrkit::testing::free_loopback_port();
  share_start_refusal(env, "bad input", std::chrono::seconds(1));  // a client: its store never answers
  env.rank = 0;
  share_start_refusal(env, "bad input", std::chrono::seconds(1));  // the host: nobody connects
}

}  // namespace
}  // namespace lrkit::distributed
