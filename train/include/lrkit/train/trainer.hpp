// The reference training loop. It only assembles components and owns `step`;
// the loop reads top to bottom: hyper-parameters (schedule, HDET spread) ->
// data -> forward -> backward (per replica) -> gradient all-reduce -> clip ->
// optimizer step -> log -> HDET converge / meta-update -> checkpoint -> eval.
// Logs go to DIR/log.h5.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct TrainSummary {
  int64_t steps = 0;
  double final_loss = 0.0;       // mean training loss of the last logged window
  double final_eval_loss = 0.0;  // loss on the `heldout` set (else the first set) after the last step
  std::map<std::string, double> final_eval_losses;  // every eval set after the last step (rank 0)
  double final_lr_scale = 1.0;   // HDET: the auto-LR correction of the schedule at the end
  double tokens_per_second = 0.0;
  double seconds = 0.0;
  std::vector<double> losses;    // training loss of every step this process ran
  std::string checkpoint;        // the last checkpoint written
  std::string log_path;          // the HDF5 run log
};

// The run diverged: a non-finite training loss under train.nonfinite=stop, train.skip_limit skipped updates in a
// row, or a non-finite loss at the evaluation after the last step. `lrkit train` exits 3 on it, so a sweep tells a
// diverged run from a failed one.
class DivergedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A stop signal (SIGTERM, SIGINT, SIGHUP; see stop_signals.hpp) while training: the run stopped after the
// step in progress and checkpointed it. `lrkit train` exits 128 + signal(). The message is empty on ranks
// other than 0.
class StoppedError : public std::runtime_error {
 public:
  StoppedError(int signal, const std::string& message) : std::runtime_error(message), signal_(signal) {}
  int signal() const { return signal_; }

 private:
  int signal_;
};

// Throws std::invalid_argument for bad configuration, DivergedError on a
// non-finite loss (naming the step), StoppedError after a stop signal and
// std::runtime_error when training fails. `starting` runs on every worker once
// the job's workers agreed to start (the process group's first checks passed)
// and before the run reads or writes its run directory: `lrkit train` moves an
// earlier run aside there (--overwrite), so that a job that one of its workers
// refuses leaves the directory as it was.
TrainSummary run_training(const TrainConfig& config, std::ostream& progress, const std::function<void()>& starting = {});

}  // namespace lrkit::train
