#include "lrkit/distributed/launcher_store.hpp"

// TCPStore's server options and getPort are the same in LibTorch 1.13 and 2.x.
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <pthread.h>
#include <signal.h>

#include <stdexcept>
#include <string>

namespace lrkit::distributed {

namespace {

// Every signal blocked in this thread while it lives. Threads started meanwhile keep that mask for good, so a
// signal to the launcher (SIGTERM from a job scheduler, SIGINT from a terminal) reaches the thread that forwards
// it to the workers, never the store's.
class SignalsBlocked {
 public:
  SignalsBlocked() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &before_);
  }
  ~SignalsBlocked() { pthread_sigmask(SIG_SETMASK, &before_, nullptr); }
  SignalsBlocked(const SignalsBlocked&) = delete;
  SignalsBlocked& operator=(const SignalsBlocked&) = delete;

 private:
  sigset_t before_{};
};

}  // namespace

struct LauncherStore::Server {
  c10::intrusive_ptr<c10d::TCPStore> store;
};

LauncherStore::LauncherStore() {
  c10d::TCPStoreOptions options;
  options.port = 0;  // the kernel's choice, held from now on
  options.isServer = true;
  options.waitWorkers = false;  // the workers come later; they find each other through the store's keys
  const SignalsBlocked blocked;  // while the store starts its threads
  try {
    server_ = std::make_unique<Server>(Server{c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options)});
  } catch (const c10::Error& e) {
    throw std::runtime_error(std::string("cannot host the workers' rendezvous store on a loopback port: ") +
                             e.what_without_backtrace());
  }
  if (port() <= 0) throw std::runtime_error("the workers' rendezvous store reports no port");
}

LauncherStore::~LauncherStore() = default;

int LauncherStore::port() const { return server_->store->getPort(); }

}  // namespace lrkit::distributed
