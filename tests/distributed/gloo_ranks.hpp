// Threads as the Gloo ranks of one job: each joins the rendezvous store over
// the loopback and forms a real c10d group, as a worker process does.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lrkit/distributed/collective.hpp"
#include "thread_ranks.hpp"

namespace lrkit::testing {

// 127.0.0.1:port as the socket calls take it (port 0: any free one).
inline sockaddr_in loopback_address(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

// A loopback port free a moment ago, for rank 0 to host the rendezvous store on (as under SLURM or Kubeflow).
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr = loopback_address(0);
  socklen_t size = sizeof addr;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &size);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Returns once something listens on the loopback `port` (or `limit` has passed).
inline void wait_until_listening(int port, std::chrono::milliseconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    const sockaddr_in addr = loopback_address(port);
    const bool listening = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    if (listening || std::chrono::steady_clock::now() > until) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Runs body(rank, group) for `workers` Gloo ranks (threads) that meet at the rendezvous store on `port`, lrkit's
// launcher's or (launcher_store false) rank 0's own, whose operations time out after `operation_timeout`; returns
// what each threw as std::runtime_error ("" where nothing).
template <typename Body>
std::vector<std::string> on_gloo_ranks(int port, bool launcher_store, int workers,
                                       std::chrono::milliseconds operation_timeout, Body body) {
  return on_threads<std::string>(workers, [&](size_t r) {
    const int rank = static_cast<int>(r);
    distributed::DistributedEnv env;
    env.rank = env.local_rank = rank;
    env.world_size = env.local_world_size = workers;
    env.master_port = port;
    env.store_hosted_by_launcher = launcher_store;
    // Rank 0's thread hosts the store: on a loaded machine it listened only after the others' short operation
    // timeout had passed (they gave up connecting after 1 s). The others wait for it to listen, as a job's workers
    // wait for the store its launcher or rank 0 starts, for as long as a collective is allowed.
    if (rank != 0 && !launcher_store) wait_until_listening(port, std::chrono::seconds(60));
    try {
      auto group = distributed::make_c10d_collective(env, distributed::Backend::gloo, torch::kCPU, operation_timeout);
      body(rank, *group);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

}  // namespace lrkit::testing
