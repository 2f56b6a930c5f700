// A run directory has one owner. `lrkit train` takes DIR/lrkit.lock (flock,
// holding the owner's PID) for the whole run: the --nproc launcher takes it and
// its workers inherit it, so a second `lrkit train` on the same --out is refused
// naming the holder, also while orphaned workers of a killed launcher write.
// A directory holding an earlier run is continued only with --resume, moved
// aside with --overwrite (once the job starts), and otherwise refused; a run that finished already
// makes --resume a no-op: a successful one, or exit 3 where its evaluation after the
// last step was non-finite (it diverged at its end).
#pragma once

#include <ostream>
#include <optional>
#include <string>
#include <utility>

#include "lrkit/train/train_config.hpp"

namespace lrkit::cli {

// What owns a directory: `lrkit train` its run directory (DIR/lrkit.lock, inherited by the job's workers), or `lrkit
// sweep` its sweep.out (DIR/lrkit_sweep.lock, the sweep process's own: two sweeps of one directory each failed the
// runs the other trained, and wrote their summaries over each other).
enum class DirectoryOwner { kTrain, kSweep };

class DirectoryLock {
 public:
  // Creates the directory when needed; throws UsageError naming the holder when another process holds it.
  DirectoryLock(const std::string& dir, DirectoryOwner owner);
  ~DirectoryLock();
  void release();
  DirectoryLock(DirectoryLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  DirectoryLock& operator=(DirectoryLock&& other) noexcept {
    std::swap(fd_, other.fd_);
    return *this;
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// The owner of config.out: holds its lock, after refusing a directory that holds an earlier run where neither
// --resume nor --overwrite says what to do with it. An earlier run that --overwrite replaces stays in place until
// clear_earlier_run(), which `lrkit train` calls once every worker of its job agreed to start: a job that one of its
// workers refuses leaves the directory as it found it.
class RunDirectoryOwner {
 public:
  explicit RunDirectoryOwner(const train::TrainConfig& config);
  // Moves the earlier run that --overwrite replaces aside to DIR.old-<UTC time>, said on `out`; keeps the lock.
  void clear_earlier_run(std::ostream& out);

 private:
  std::string dir_;
  DirectoryLock lock_;
  bool earlier_run_;
};

// The run directory a log lies in: its checkpoints and its lock ("." for a bare file name). A link at `log` is
// followed: a run's log is read by a link kept elsewhere ("latest.h5"), and its run directory is the log's.
std::string run_directory_of(const std::string& log);

// The pid of the process that holds lock file `path` (flock) now ("" when the file names none), or nothing when
// no process holds it. Creates nothing; its probe holds a shared lock for an instant, which lock takers wait out.
std::optional<std::string> lock_holder(const std::string& path);

// Who writes run log `log` now, or nothing: "lrkit train (pid P)", which holds its run directory's lock, or
// "a DispersionHook loop (pid P)", which holds LOG.lock (lrkit.torch); through a link, both beside the log it names.
std::optional<std::string> live_log_writer(const std::string& log);

// True when `dir` holds a checkpoint (a run's trained state).
bool holds_checkpoints(const std::string& dir);

// Renames run directory `dir` to DIR.old-<UTC time> and returns that path: nothing is deleted. Throws
// UsageError when a running lrkit train owns it or the rename fails.
std::string move_run_directory_aside(const std::string& dir);

// True when --resume finds the run complete: its newest checkpoint is at train.steps. A newest checkpoint
// (--resume auto) whose name gives an earlier step is not read (the whole file, for its checksum), since the trainer
// reads it next, unless `read_unfinished`: a launcher and a job's workers read it, so that a damaged one is refused
// once, before the workers start or meet, rather than by each of them.
bool run_finished(const train::TrainConfig& config, bool read_unfinished);

// For a finished run: what its log holds at the evaluation after the last step where that was non-finite
// ("heldout loss nan"), the sign that its last updates broke the model (the run exited 3 then).
std::optional<std::string> nonfinite_final_evaluation(const train::TrainConfig& config);

}  // namespace lrkit::cli
