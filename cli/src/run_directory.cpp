#include "run_directory.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <thread>

#include "command.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/output_file.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/trained_schedule.hpp"

namespace lrkit::cli {

namespace fs = std::filesystem;

namespace {
std::string lock_path(const std::string& dir) { return (fs::path(dir) / "lrkit.lock").string(); }

// lock_holder (`lrkit log check`, a second train's message) probes with a shared lock held for an instant: a train
// that starts in that instant waits it out instead of being refused. A run that holds the lock keeps it, so a
// second train is still refused, a second later.
bool lock_waiting_out_probes(int fd) {
  constexpr int kAttempts = 200;
  for (int attempt = 0;; ++attempt) {
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return true;
    if (errno != EWOULDBLOCK || attempt + 1 == kAttempts) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}
}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, DirectoryOwner owner) {
  const bool train = owner == DirectoryOwner::kTrain;
  const std::string what = train ? "run directory '" + dir + "'" : "sweep directory '" + dir + "'";
  std::error_code ec;
  // A link made before the directory it names ("runs/a -> /scratch/a", which --overwrite leaves too): that directory.
  fs::create_directories(through_links(dir), ec);
  if (ec) throw UsageError("cannot create " + what + ": " + ec.message());
  const std::string path = train ? lock_path(dir) : (fs::path(dir) / "lrkit_sweep.lock").string();
  // A run's lock is inherited by its workers on purpose; a sweep's is its own (its runs hold their directories').
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | (train ? 0 : O_CLOEXEC), 0644);
  if (fd_ < 0) throw UsageError("cannot open '" + path + "': " + std::strerror(errno));
  if (!lock_waiting_out_probes(fd_)) {
    std::string holder;
    std::ifstream(path) >> holder;
    ::close(fd_);
    fd_ = -1;
    throw UsageError(what + " is in use by another " + (train ? "lrkit train" : "lrkit sweep") +
                     (holder.empty() ? std::string() : " (pid " + holder + ")") + "; wait for it or choose another " +
                     (train ? "--out" : "sweep.out"));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size()))
    throw UsageError("cannot write '" + path + "': " + std::strerror(errno));
}

DirectoryLock::~DirectoryLock() { release(); }

std::optional<std::string> lock_holder(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;  // no run ever held it
  const bool held = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (!held) return std::nullopt;
  std::string holder;
  std::ifstream(path) >> holder;
  return holder;
}

std::string run_directory_of(const std::string& log) {
  const fs::path parent = through_links(log).parent_path();
  return parent.empty() ? "." : parent.string();
}

std::optional<std::string> live_log_writer(const std::string& log) {
  const auto described = [](const std::string& who, const std::string& pid) { return who + (pid.empty() ? "" : " (pid " + pid + ")"); };
  if (const auto pid = lock_holder(lock_path(run_directory_of(log)))) return described("lrkit train", *pid);
  if (const auto pid = lock_holder(through_links(log).string() + ".lock")) return described("a DispersionHook loop", *pid);
  return std::nullopt;
}

void DirectoryLock::release() {
  if (fd_ >= 0) ::close(fd_);  // closing the last descriptor releases the lock
  fd_ = -1;
}

namespace {

bool holds_a_run(const std::string& dir) { return fs::exists(train::run_log_path(dir)) || holds_checkpoints(dir); }

// "runs/a/" names runs/a: a suffix goes on its name, not into it as a new entry ("runs/a/.old-...").
fs::path without_trailing_separators(std::string dir) {
  while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}

std::string utc_stamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", std::gmtime(&now));
  return buf;
}

}  // namespace

bool holds_checkpoints(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(train::checkpoint_dir(dir), ec))
    if (entry.path().extension() == ".pt") return true;
  return false;
}

std::string move_run_directory_aside(const std::string& run_directory) {
  DirectoryLock(run_directory, DirectoryOwner::kTrain).release();  // refuses a directory that a running lrkit train owns
  // A link to the run directory ("runs/a -> /scratch/a") stays, and the directory it names goes aside on its own
  // disk: moving the link aside put the next run beside the link, on another disk.
  const std::string dir = through_links(without_trailing_separators(run_directory)).string();
  // Two overwrites within one second (a script's retries) share a stamp: the second takes DIR.old-<time>-2.
  const std::string stamped = dir + ".old-" + utc_stamp();
  for (int n = 1;; ++n) {
    const std::string aside = n == 1 ? stamped : stamped + "-" + std::to_string(n);
    std::error_code ec;
    if (fs::exists(aside, ec)) continue;
    fs::rename(dir, aside, ec);
    if (!ec) return aside;
    // Taken between the check and the rename: the next name.
    if (ec != std::errc::directory_not_empty && ec != std::errc::file_exists)
      throw UsageError("cannot move '" + dir + "' aside to '" + aside + "': " + ec.message());
  }
}

bool run_finished(const train::TrainConfig& c, bool read_unfinished) {
  if (c.resume.empty()) return false;
  const auto path = c.resume == "auto" ? train::latest_checkpoint(c.out) : std::optional<std::string>(c.resume);
  if (!path) return false;
  const auto named_step = train::checkpoint_step_of(fs::path(*path).filename().string());
  if (c.resume == "auto" && !read_unfinished && named_step && *named_step < c.train.steps) return false;
  const auto info = train::read_checkpoint_info(*path);  // a missing or damaged --resume PATH: refused before the lock
  // Finished under another spec too where it trained the same rates (a sweep's main run asked again for its length).
  return info.step == c.train.steps && !train::first_rate_change(*path, info, c.schedule, c.train.steps);
}

std::optional<std::string> nonfinite_final_evaluation(const train::TrainConfig& c) {
  const std::string log = train::run_log_path(c.out);
  if (!fs::exists(log)) return std::nullopt;
  for (const auto& set : c.eval_sets()) {
    const std::string group = "/eval/" + set.name;
    if (!h5::has_dataset(log, group + "/loss")) continue;
    const auto steps = h5::read_series(log, group + "/step");
    const auto losses = h5::read_series(log, group + "/loss");
    if (steps.empty() || losses.size() != steps.size() || steps.back() != static_cast<double>(c.train.steps)) continue;
    if (!std::isfinite(losses.back())) return set.name + " loss " + format_number(losses.back());
  }
  return std::nullopt;
}

RunDirectoryOwner::RunDirectoryOwner(const train::TrainConfig& c)
    : dir_(c.out), lock_(c.out, DirectoryOwner::kTrain), earlier_run_(c.resume.empty() && holds_a_run(c.out)) {
  if (!earlier_run_) return;
  if (!c.overwrite)
    throw UsageError("run directory '" + dir_ + "' holds an earlier run (log.h5 or checkpoints); continue it with "
                     "--resume auto, move it aside with --overwrite, or choose another --out");
  // The move comes after the job's rendezvous, where a refusal no longer reaches the other workers: what would fail
  // it is refused here.
  const fs::path named = without_trailing_separators(dir_);
  if (named.filename() == "." || named.filename() == "..")
    throw UsageError("--overwrite cannot move the run directory '" + dir_ + "' aside while it is named '" +
                     named.filename().string() + "': name it by its own name in --out");
  const fs::path parent = fs::absolute(through_links(named)).parent_path();
  if (::access(parent.c_str(), W_OK | X_OK) != 0)
    throw UsageError("--overwrite cannot move the earlier run in '" + dir_ + "' aside: its parent directory '" +
                     parent.string() + "' is not writable (" + std::strerror(errno) + ")");
}

void RunDirectoryOwner::clear_earlier_run(std::ostream& out) {
  if (!earlier_run_) return;
  lock_.release();  // the old directory's lock goes with it
  const std::string aside = move_run_directory_aside(dir_);
  out << "moved the earlier run in " << dir_ << " to " << aside << std::endl;
  lock_ = DirectoryLock(dir_, DirectoryOwner::kTrain);
  earlier_run_ = false;
}

}  // namespace lrkit::cli
