// Where a Gloo worker's sockets listen, which its peers then connect to. On one
// machine, loopback: nothing leaves it, and a host name that resolves to no
// usable address (some containers) does not matter. Across machines loopback
// cannot work (each peer would dial itself), so, as torch.distributed does: the
// interfaces GLOO_SOCKET_IFNAME names, else the address this machine's host
// name resolves to.
#pragma once

#include <string>
#include <vector>

#include "lrkit/distributed/launcher_environment.hpp"

namespace lrkit::distributed {

struct GlooEndpoint {
  std::vector<std::string> interfaces;  // GLOO_SOCKET_IFNAME's, comma-separated, in order
  bool loopback = false;                // every worker known to be on this machine, no GLOO_SOCKET_IFNAME
  // Neither: the host name's address (c10d's default device; loopback with a warning when it resolves to none).
};

// Throws std::invalid_argument for a GLOO_SOCKET_IFNAME with an empty entry, or naming an interface that has no
// address on this machine.
GlooEndpoint gloo_endpoint(const DistributedEnv& env);

// The loopback address `host` resolves to (Debian's /etc/hosts maps the machine's own name to 127.0.1.1), where the
// host name's device listens and no other machine can connect; "" when it resolves to another address first, or
// to none.
std::string loopback_address_of(const std::string& host);

}  // namespace lrkit::distributed
