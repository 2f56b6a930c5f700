// A clean stop on SIGTERM, SIGINT or SIGHUP (a job scheduler's preemption,
// Ctrl-C, `kill PID`). While a StopSignals exists, the first such signal is
// only recorded: the trainer finishes the step in progress, writes a checkpoint
// and the log, and exits 128 + the signal. The same request often arrives
// twice at once (a terminal or a scheduler signals a launcher and its workers
// together, and the launcher forwards it), so a stop signal within
// `repeat_window` of the first is the same request; a later one ends the
// process at once, the signal's default action. Destroyed before any
// request, it restores the handlers it replaced; after one, it leaves its own.
#pragma once

#include <chrono>
#include <csignal>

namespace lrkit::train {

class StopSignals {
 public:
  explicit StopSignals(std::chrono::milliseconds repeat_window = std::chrono::seconds(2));
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first stop signal received while one existed (0: none).
  static int requested();

 private:
  struct sigaction old_[3] {};
};

}  // namespace lrkit::train
