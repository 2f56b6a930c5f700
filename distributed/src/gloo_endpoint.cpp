#include "gloo_endpoint.hpp"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cstdlib>
#include <stdexcept>

namespace lrkit::distributed {

namespace {

// Whether this machine has an interface `name` with an IPv4 or IPv6 address, where Gloo can listen. Asked here, not
// of Gloo: its refusal is an "[enforce fail at ...]" error, and it leaks the interface list on that path.
bool interface_has_address(const std::string& name) {
  ifaddrs* interfaces = nullptr;
  if (::getifaddrs(&interfaces) != 0) return true;  // cannot tell: let Gloo try
  bool found = false;
  for (const ifaddrs* i = interfaces; i != nullptr && !found; i = i->ifa_next)
    found = i->ifa_name != nullptr && name == i->ifa_name && i->ifa_addr != nullptr &&
            (i->ifa_addr->sa_family == AF_INET || i->ifa_addr->sa_family == AF_INET6);
  ::freeifaddrs(interfaces);
  return found;
}

}  // namespace

GlooEndpoint gloo_endpoint(const DistributedEnv& env) {
  GlooEndpoint endpoint;
  const char* names = std::getenv("GLOO_SOCKET_IFNAME");
  if (names == nullptr || *names == '\0') {
    endpoint.loopback = env.local_world_size_known && env.world_size == env.local_world_size;
    return endpoint;
  }
  const std::string text = names;
  for (size_t start = 0;;) {
    const size_t comma = text.find(',', start);
    endpoint.interfaces.push_back(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (endpoint.interfaces.back().empty())
      throw std::invalid_argument("environment variable GLOO_SOCKET_IFNAME='" + text +
                                  "' has an empty interface name (expected names such as eth0 or eth0,ib0)");
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  for (const std::string& name : endpoint.interfaces)
    if (!interface_has_address(name))
      throw std::invalid_argument("environment variable GLOO_SOCKET_IFNAME='" + text + "': this machine has no "
                                  "interface '" + name + "' with an address; `ip -brief address` lists its interfaces");
  return endpoint;
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
