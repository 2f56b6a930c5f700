#include "local_launcher.hpp"

#include "child_process.hpp"
#include "command.hpp"
#include "lrkit/distributed/launcher_store.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <iostream>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>

namespace lrkit::cli {

namespace {

volatile sig_atomic_t g_stop_signal = 0;
volatile sig_atomic_t g_stop_signals = 0;  // how many arrived
void on_stop_signal(int signal) {
  g_stop_signal = signal;
  g_stop_signals = g_stop_signals + 1;
}

// SIGTERM, SIGINT and SIGHUP to the launcher (a job scheduler's or `kill PID`)
// are forwarded to the workers instead of ending the launcher alone.
struct LauncherSignals {
  static constexpr int kSignals[] = {SIGTERM, SIGINT, SIGHUP};
  struct sigaction old[3] {};
  LauncherSignals() {
    g_stop_signal = 0;
    g_stop_signals = 0;
    struct sigaction action {};
    action.sa_handler = on_stop_signal;
    sigemptyset(&action.sa_mask);
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &action, &old[i]);
  }
  ~LauncherSignals() {
    for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &old[i], nullptr);
  }
};

}  // namespace

int launch_local_workers(const std::vector<std::string>& command_args, int workers) {
  const distributed::LauncherStore store;  // held until every worker has ended
  const std::string port = std::to_string(store.port());
  std::vector<pid_t> pids;
  const LauncherSignals stop_signals;
  for (int rank = 0; rank < workers; ++rank) {
    const auto torchrun_variables = [&] {
      ::setenv("RANK", std::to_string(rank).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(workers).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(workers).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", port.c_str(), 1);
      ::setenv(distributed::kLauncherStoreVariable, "1", 1);
      ::setenv("LRKIT_RUN_LOCKED", "1", 1);  // the launcher holds the run directory's lock
    };
    pids.push_back(start_lrkit_train(command_args, torchrun_variables, "worker " + std::to_string(rank)));
  }

  // After the first failure the others get SIGTERM (and SIGCONT, so a stopped
  // worker can act on it), then SIGKILL once the grace period is over: a hung
  // worker never keeps the launcher waiting. Ends that every worker reaches at
  // the same step, decided on gathered values (divergence, a stop signal one of
  // them received), are not failures: rank 0 may still be writing that step's
  // log row and checkpoint when a faster worker exits, so the others first get
  // the grace period to exit on their own. A stop signal to the launcher is
  // forwarded, each time it comes (the workers act on the first and end at once
  // on a later one); they get kStopGrace to finish their step and checkpoint it.
  constexpr auto kGrace = std::chrono::seconds(5);
  constexpr auto kStopGrace = std::chrono::seconds(30);  // a job scheduler's usual wait before SIGKILL
  int result = 0;
  size_t running = pids.size();
  std::optional<std::chrono::steady_clock::time_point> term_at, kill_at;
  const auto stop_the_others = [&](int signal, std::chrono::seconds grace) {
    for (pid_t other : pids)
      if (other > 0) {
        ::kill(other, signal);
        ::kill(other, SIGCONT);
      }
    if (!kill_at) kill_at = std::chrono::steady_clock::now() + grace;
  };
  int forwarded = 0;
  bool stopped = false;  // by a stop signal, to the launcher or to a worker
  while (running > 0) {
    if (g_stop_signals > forwarded) {
      if (forwarded == 0) {
        result = 128 + g_stop_signal;
        stopped = true;
        std::cerr << "lrkit train: " << strsignal(g_stop_signal)
                  << "; the workers stop after their step in progress and checkpoint it (a second signal: at once)"
                  << std::endl;
      }
      forwarded = g_stop_signals;
      stop_the_others(g_stop_signal, kStopGrace);
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, WNOHANG);  // polled: a signal between checks is never missed
    if (done < 0 && errno != EINTR) break;
    if (done <= 0) {
      if (term_at && !kill_at && std::chrono::steady_clock::now() >= *term_at) stop_the_others(SIGTERM, kGrace);
      if (kill_at && std::chrono::steady_clock::now() >= *kill_at)
        for (pid_t other : pids)
          if (other > 0) ::kill(other, SIGKILL);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      continue;
    }
    for (size_t rank = 0; rank < pids.size(); ++rank) {
      if (pids[rank] != done) continue;
      pids[rank] = 0;
      --running;
      const int code = exit_code(status);
      if (code == 0 || result != 0) continue;
      result = code;
      const bool stopped_by_signal = WIFEXITED(status) && code > 128;  // exited by itself: it finished the step
      if (code == kExitDiverged || stopped_by_signal) {
        stopped = stopped_by_signal;
        term_at = std::chrono::steady_clock::now() + (stopped_by_signal ? kStopGrace : kGrace);  // a checkpoint, a log row
      } else {
        std::cerr << "lrkit train: worker " << rank << " " << how_it_failed(status) << "; stopping the other workers" << std::endl;
        stop_the_others(SIGTERM, kGrace);
      }
    }
  }
  if (stopped) return result;
  // Bad input and divergence keep their codes (a sweep acts on them); any other failure is 1.
  return result == kExitUsage || result == kExitDiverged ? result : (result != 0 ? kExitFailure : kExitOk);
}

}  // namespace lrkit::cli
