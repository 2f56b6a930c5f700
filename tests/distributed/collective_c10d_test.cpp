// What distributed_env_from_environment reads: the launchers' variables and who
// hosts the rendezvous store.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/launcher_store.hpp"

namespace lrkit::distributed {
namespace {

// Sets the given variables (nullopt: unset) for the test's lifetime and restores them after.
class ScopedEnvironment {
 public:
  explicit ScopedEnvironment(const std::map<std::string, std::optional<std::string>>& values) {
    for (const auto& [name, value] : values) {
      const char* old = std::getenv(name.c_str());
      saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
      set(name, value);
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) set(name, value);
  }

 private:
  static void set(const std::string& name, const std::optional<std::string>& value) {
    if (value) ::setenv(name.c_str(), value->c_str(), 1);
    else ::unsetenv(name.c_str());
  }
  std::map<std::string, std::optional<std::string>> saved_;
};

const std::map<std::string, std::optional<std::string>> kTwoWorkers = {
    {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
    {"MASTER_PORT", "29611"}, {"SLURM_PROCID", std::nullopt}, {"TORCHELASTIC_USE_AGENT_STORE", std::nullopt},
    {"TORCHELASTIC_RESTART_COUNT", std::nullopt}, {kLauncherStoreVariable, std::nullopt}};

std::map<std::string, std::optional<std::string>> two_workers_and(
    const std::map<std::string, std::optional<std::string>>& extra) {
  auto values = kTwoWorkers;
  for (const auto& [name, value] : extra) values[name] = value;
  return values;
}

TEST(DistributedEnv, RankZeroHostsTheStoreByDefault) {
  const ScopedEnvironment environment(kTwoWorkers);
  const auto env = distributed_env_from_environment();
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.master_port, 29611);
  EXPECT_FALSE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "");
}

TEST(DistributedEnv, TorchrunsAgentStoreIsJoinedUnderTheAttemptsPrefix) {
  const ScopedEnvironment environment(
      two_workers_and({{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"}}));
  const auto env = distributed_env_from_environment();
  EXPECT_TRUE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "/worker/attempt_2");
}

TEST(DistributedEnv, LrkitsLauncherStoreIsJoinedWithoutAPrefix) {
  const ScopedEnvironment environment(two_workers_and({{kLauncherStoreVariable, "1"}}));
  const auto env = distributed_env_from_environment();
  EXPECT_TRUE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "");
}

TEST(DistributedEnv, AMalformedRestartCountIsNamed) {
  const ScopedEnvironment environment(
      two_workers_and({{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "x"}}));
  try {
    distributed_env_from_environment();
    FAIL() << "a restart count that is no integer must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("TORCHELASTIC_RESTART_COUNT='x'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lrkit::distributed
