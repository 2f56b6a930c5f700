#include "gloo_endpoint.hpp"

#include <cstdlib>
#include <stdexcept>

namespace lrkit::distributed {

GlooEndpoint gloo_endpoint(const DistributedEnv& env) {
  GlooEndpoint endpoint;
  const char* names = std::getenv("GLOO_SOCKET_IFNAME");
  if (names == nullptr || *names == '\0') {
    endpoint.loopback = env.world_size == env.local_world_size;
    return endpoint;
  }
  const std::string text = names;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    const std::string name = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (name.empty())
      throw std::invalid_argument("environment variable GLOO_SOCKET_IFNAME='" + text +
                                  "' has an empty interface name (expected names such as eth0 or eth0,ib0)");
    endpoint.interfaces.push_back(name);
    if (comma == std::string::npos) return endpoint;
    start = comma + 1;
  }
}

}  // namespace lrkit::distributed
