#include "gloo_endpoint.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
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

std::string loopback_address_of(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || found == nullptr) return "";
  // c10d takes the first address it can bind, which for the machine's own name is the first one listed.
  std::string loopback;
  std::array<char, INET6_ADDRSTRLEN> text{};
  if (found->ai_family == AF_INET) {
    const auto* address = reinterpret_cast<const sockaddr_in*>(found->ai_addr);
    if ((ntohl(address->sin_addr.s_addr) >> 24) == 127 && ::inet_ntop(AF_INET, &address->sin_addr, text.data(), text.size()))
      loopback = text.data();
  } else if (found->ai_family == AF_INET6) {
    const auto* address = reinterpret_cast<const sockaddr_in6*>(found->ai_addr);
    if (IN6_IS_ADDR_LOOPBACK(&address->sin6_addr) && ::inet_ntop(AF_INET6, &address->sin6_addr, text.data(), text.size()))
      loopback = text.data();
  }
  ::freeaddrinfo(found);
  return loopback;
}

}  // namespace lrkit::distributed
