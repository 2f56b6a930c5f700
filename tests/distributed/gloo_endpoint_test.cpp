// Where Gloo's sockets listen: loopback on one machine, GLOO_SOCKET_IFNAME's
// interfaces where set, else the host name's address (across machines loopback
// made every peer dial itself), and which names resolve to loopback.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "gloo_endpoint.hpp"
#include "lrkit/common/scoped_environment.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::common::ScopedEnvironment;
using lrkit::common::Variables;

DistributedEnv workers(int world_size, int local_world_size) {
  DistributedEnv env;
  env.world_size = world_size;
  env.local_world_size = local_world_size;
  return env;
}

TEST(GlooEndpoint, OneMachineListensOnLoopback) {
  const ScopedEnvironment environment(Variables{{"GLOO_SOCKET_IFNAME", std::nullopt}});
  const GlooEndpoint endpoint = gloo_endpoint(workers(4, 4));
  EXPECT_TRUE(endpoint.loopback);
  EXPECT_TRUE(endpoint.interfaces.empty());
}

TEST(GlooEndpoint, SeveralMachinesListenOnTheHostNamesAddress) {
  const ScopedEnvironment environment(Variables{{"GLOO_SOCKET_IFNAME", ""}});  // empty: unset
  for (const auto& [world, local] : std::vector<std::pair<int, int>>{{8, 4}, {2, 1}, {7, 3}}) {
    const GlooEndpoint endpoint = gloo_endpoint(workers(world, local));
    EXPECT_FALSE(endpoint.loopback) << world << " workers, " << local << " here";
    EXPECT_TRUE(endpoint.interfaces.empty());
  }
  // RANK and WORLD_SIZE without LOCAL_WORLD_SIZE (Kubeflow's PyTorchJob, a worker per pod): maybe several machines.
  DistributedEnv unknown = workers(4, 4);
  unknown.local_world_size_known = false;
  EXPECT_FALSE(gloo_endpoint(unknown).loopback);
}

// Loopback ("lo") is the one interface every Linux machine has with an address.
TEST(GlooEndpoint, GlooSocketIfnameNamesTheInterfacesOnAnyMachineCount) {
  const ScopedEnvironment environment(Variables{{"GLOO_SOCKET_IFNAME", "lo,lo"}});
  for (const int world : {2, 8}) {
    const GlooEndpoint endpoint = gloo_endpoint(workers(world, 2));
    EXPECT_EQ(endpoint.interfaces, (std::vector<std::string>{"lo", "lo"}));
    EXPECT_FALSE(endpoint.loopback);
  }
}

TEST(GlooEndpoint, AnInterfaceWithoutAnAddressIsRefused) {
  const ScopedEnvironment environment(Variables{{"GLOO_SOCKET_IFNAME", "lo,lrkit_absent0"}});
  try {
    gloo_endpoint(workers(2, 1));
    ADD_FAILURE() << "an absent interface accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "environment variable GLOO_SOCKET_IFNAME='lo,lrkit_absent0': this machine has no "
                                     "interface 'lrkit_absent0' with an address; `ip -brief address` lists its interfaces");
  }
}

TEST(GlooEndpoint, AnEmptyInterfaceNameIsRefused) {
  for (const std::string bad : {",", "eth0,", ",eth0", "eth0,,ib0"}) {
    const ScopedEnvironment environment(Variables{{"GLOO_SOCKET_IFNAME", bad}});
    try {
      gloo_endpoint(workers(2, 1));
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "environment variable GLOO_SOCKET_IFNAME='" + bad +
                                           "' has an empty interface name (expected names such as eth0 or eth0,ib0)");
    }
  }
}

// Numeric addresses resolve to themselves without a name service, so these hold on any machine.
TEST(GlooEndpoint, LoopbackAddressesAreNamedAndOthersAreNot) {
  EXPECT_EQ(loopback_address_of("127.0.1.1"), "127.0.1.1");  // Debian's /etc/hosts entry for the machine's own name
  EXPECT_EQ(loopback_address_of("127.0.0.1"), "127.0.0.1");
  EXPECT_EQ(loopback_address_of("::1"), "::1");
  EXPECT_EQ(loopback_address_of("10.1.2.3"), "");
  EXPECT_EQ(loopback_address_of("fd00::1"), "");
  const std::string localhost = loopback_address_of("localhost");
  EXPECT_TRUE(localhost.rfind("127.", 0) == 0 || localhost == "::1") << localhost;
}

}  // namespace
}  // namespace lrkit::distributed
