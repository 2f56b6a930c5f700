// The rendezvous store a local launcher (`lrkit train --nproc N`) hosts for
// the workers it starts. It listens on a port the kernel picks and holds that
// port from before the first worker starts until the launcher ends, so no
// other process can take it in between: picking a free port, releasing it and
// letting rank 0 bind it later raced with every other socket on a busy
// machine. The workers find it through MASTER_PORT and join it as clients
// (kLauncherStoreVariable=1 in their environment; see DistributedEnv).
#pragma once

#include <memory>

namespace lrkit::distributed {

inline constexpr const char* kLauncherStoreVariable = "LRKIT_LAUNCHER_STORE";

class LauncherStore {
 public:
  // Throws std::runtime_error when no port can be opened.
  LauncherStore();
  ~LauncherStore();
  LauncherStore(const LauncherStore&) = delete;
  LauncherStore& operator=(const LauncherStore&) = delete;

  int port() const;

 private:
  struct Server;
  std::unique_ptr<Server> server_;
};

}  // namespace lrkit::distributed
