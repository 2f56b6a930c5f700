#include "lrkit/train/stop_signals.hpp"

#include <time.h>

#include <atomic>
#include <cstdint>

namespace lrkit::train {

namespace {

constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP};

// Read and written in the handler: lock-free atomics and clock_gettime are async-signal-safe.
std::atomic<int> g_requested{0};
std::atomic<int64_t> g_first_ns{0};
std::atomic<int64_t> g_window_ns{0};
static_assert(std::atomic<int64_t>::is_always_lock_free);

int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<int64_t>(now.tv_sec) * 1000000000 + now.tv_nsec;
}

void on_stop_signal(int signal) {
  const int64_t now = monotonic_ns();
  int none = 0;
  if (g_requested.compare_exchange_strong(none, signal)) {
    g_first_ns = now;
    return;
  }
  const int64_t first = g_first_ns;  // 0: the first request's handler, on another thread, has not stored it yet
  if (first == 0 || now - first < g_window_ns) return;  // the first request, delivered twice
  // Asked again: the default action, delivered once this handler returns (the signal is blocked until then).
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  sigemptyset(&default_action.sa_mask);
  ::sigaction(signal, &default_action, nullptr);
  ::raise(signal);
}

}  // namespace

StopSignals::StopSignals(std::chrono::milliseconds repeat_window) {
  g_requested = 0;
  g_window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(repeat_window).count();
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  action.sa_flags = SA_RESTART;  // a read or a collective's socket call goes on instead of failing with EINTR
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &action, &old_[i]);
}

// After a request the handlers stay: the process is on its way out, and the request's second delivery (a
// launcher's forward, a few milliseconds late) must not end it before it has said where it stopped.
StopSignals::~StopSignals() {
  if (requested() != 0) return;
  for (int i = 0; i < 3; ++i) ::sigaction(kStopSignals[i], &old_[i], nullptr);
}

int StopSignals::requested() { return g_requested; }

}  // namespace lrkit::train
