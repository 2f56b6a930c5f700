#include "sweep_runner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "command.hpp"
#include "run_directory.hpp"
#include "lrkit/cli/sweep_extension.hpp"
#include "lrkit/common/scoped_environment.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/train_config.hpp"
#include "lrkit/train/worker_threads.hpp"

namespace fs = std::filesystem;

namespace lrkit::cli {

namespace {

// sweep_done's text for a run that stopped on a non-finite loss (a finished run's is empty).
const std::string kDivergedMark = "diverged\n";

volatile sig_atomic_t g_interrupted = 0;
void on_interrupt(int) { g_interrupted = 1; }

std::string joined(const std::vector<std::string>& args) {
  std::string text;
  for (const auto& a : args) text += a + "\n";
  return text;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

pid_t start_run(const SweepRun& run, const fs::path& dir) {
  const std::string log = (dir / "train.txt").string();
  const auto output_to_log = [&] {
    const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
  };
  return start_lrkit_train(run.args, output_to_log, "run " + run.name);
}

// The runs trained at once share the machine's cores: each gets LRKIT_CORES = its share (from the sweep's own
// LRKIT_CORES, if any), which its workers divide again. Set here, in the parent, since setenv is not safe between
// fork and exec; put back when the sweep ends.
class CoresForEachRun {
 public:
  explicit CoresForEachRun(int64_t jobs)
      : cores_(std::max<int64_t>(1, train::machine_cores() / std::max<int64_t>(1, jobs))),
        environment_({{"LRKIT_CORES", std::to_string(cores_)}}) {}
  int64_t cores() const { return cores_; }

 private:
  int64_t cores_;
  common::ScopedEnvironment environment_;
};

// The runs are the sweep's own processes, not workers a launcher started: torchrun's or SLURM's variables left in
// their environment made every run of a sweep in a batch script of several SLURM tasks (SLURM_PROCID and
// SLURM_NTASKS set, no srun step) wait for, or refuse, tasks that never come.
const common::Variables kNoLauncher = {
    {"SLURM_PROCID", std::nullopt}, {"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt},
    {"LOCAL_RANK", std::nullopt}, {"LOCAL_WORLD_SIZE", std::nullopt}, {"TORCHELASTIC_USE_AGENT_STORE", std::nullopt}};

// SIGINT/SIGTERM interrupt waitpid (no SA_RESTART) instead of killing the sweep outright.
struct InterruptHandlers {
  struct sigaction old_int {}, old_term {};
  InterruptHandlers() {
    g_interrupted = 0;
    struct sigaction action {};
    action.sa_handler = on_interrupt;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int);
    ::sigaction(SIGTERM, &action, &old_term);
  }
  ~InterruptHandlers() {
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGTERM, &old_term, nullptr);
  }
};

bool marked_diverged(const fs::path& dir) {
  return fs::exists(dir / "sweep_done") && lrkit::read_text(dir / "sweep_done") == kDivergedMark;
}

// Whether a run's directory holds a longer run that holds it (the sweep asks for fewer budgets than when that ran):
// kTrained where the longer run trained through the run's last step (the checkpoint there), kDiverged where it
// diverged before it, kUnfinished where it was stopped before it (it goes on under the run's own arguments: its
// steps so far are the run's), kNo where it holds no longer run.
enum class Held { kNo, kTrained, kDiverged, kUnfinished };
// `before`: the arguments the directory was started with.
Held held_by_a_longer_run(const SweepRun& run, const fs::path& dir, const std::vector<std::string>& before) {
  if (!holds_the_run(before, run.args)) return Held::kNo;
  if (fs::exists(train::checkpoint_path(dir.string(), run.steps))) return Held::kTrained;
  return marked_diverged(dir) ? Held::kDiverged : Held::kUnfinished;
}

// The arguments a run's directory was started with (its sweep_args.txt's lines); nothing where it was not.
std::optional<std::vector<std::string>> started_with(const fs::path& dir) {
  const auto args_file = dir / "sweep_args.txt";
  if (!fs::exists(args_file)) return std::nullopt;
  return lines_of(lrkit::read_text(args_file));
}

// Whether the run's directory was started with other arguments than the run's now, other than in keys that change no
// result (sweep_extension.hpp's the_same_run: those go on under the new arguments).
bool started_otherwise(const SweepRun& run, const std::optional<std::vector<std::string>>& before) {
  return before && !the_same_run(*before, run.args);
}

// Where a run starts: at its newest checkpoint (an interrupted or continued run goes on there), else at its fork.
int64_t first_step(const SweepRun& run, const fs::path& dir) {
  if (const auto newest = train::latest_checkpoint(dir.string()))
    return std::max(run.start_step, train::checkpoint_step_of(fs::path(*newest).filename().string()).value_or(0));
  return run.start_step;
}

// A run directory whose log holds other settings that define the run, or the evaluation its results are measured by
// (eval.batches), or that trained on other data file contents, than the sweep gives it now is refused,
// with the first such run's changes named: a finished run was once skipped as it was, its results trained under the
// earlier settings standing beside the new runs' as one sweep's.
// A directory the sweep restarts anyway (`restarted`: nothing trained in it) is not.
void require_the_trained_settings(const SweepPlan& plan, const std::string& out, const std::vector<std::string>& restarted) {
  std::vector<std::string> trained_otherwise;
  std::string first_changes;
  for (const auto& run : plan.runs) {
    const std::string dir = run_directory(out, run.name);
    if (std::find(restarted.begin(), restarted.end(), dir) != restarted.end()) continue;
    train::TrainConfig c;
    std::string help;
    train::parse_train_config(run.args, c, help);
    const auto changes = train::settings_other_than_logged(c, c.nproc > 1 ? c.nproc : 1, {"eval.batches"});
    if (changes.empty()) continue;
    trained_otherwise.push_back(dir);
    if (trained_otherwise.size() == 1)
      for (const auto& change : changes) first_changes += (first_changes.empty() ? "" : "; ") + change;
  }
  if (trained_otherwise.empty()) return;
  throw UsageError("run directory '" + trained_otherwise.front() + "'" +
                   (trained_otherwise.size() > 1
                        ? " (and " + std::to_string(trained_otherwise.size() - 1) + " other run(s) of this sweep)"
                        : std::string()) +
                   " holds a run trained with other settings than the sweep gives it now: " + first_changes +
                   " (the train config, the sweep file or a data file changed since it ran); put them back, or choose "
                   "another sweep.out for the new settings");
}

}  // namespace

std::string run_directory(const std::string& out, const std::string& name) { return (fs::path(out) / "runs" / name).string(); }

bool finished_earlier(const SweepRun& run, const std::string& out) {
  const fs::path dir = run_directory(out, run.name);
  const auto before = started_with(dir);
  if (started_otherwise(run, before)) {  // held, restarted, continued or refused
    const Held held = held_by_a_longer_run(run, dir, *before);
    return held == Held::kTrained || held == Held::kDiverged;
  }
  // A run killed after its last checkpoint (evaluated before it was written) but before its marker is finished too.
  return fs::exists(dir / "sweep_done") || (before && fs::exists(train::checkpoint_path(dir.string(), run.steps)));
}

std::vector<RunState> run_sweep(const SweepPlan& plan, const std::string& out, int64_t jobs, std::ostream& progress) {
  const size_t n = plan.runs.size();
  enum class Status { kPending, kRunning, kFinished, kSkipped, kDiverged, kFailed, kBlocked };
  std::vector<Status> status(n, Status::kPending);
  // A directory started with other settings stands for the run where it holds a longer run that trained through it
  // (sweep_extension.hpp: fewer budgets again) or a diverged run the new settings continue; it is restarted when it
  // holds no checkpoint (a run that failed at its start: nothing trained is lost, and the old directory is kept aside);
  // one with checkpoints goes on where the new settings continue its run (more budgets) or where it holds a longer
  // run stopped before the run's last step (fewer budgets, after an interrupted sweep), and is refused otherwise.
  // Every conflict is found before anything moves or starts.
  std::vector<std::string> restarted;
  std::vector<size_t> continued, shortened, held_runs;
  std::map<size_t, std::string> carried_out_otherwise;  // the run, its result-free changes
  for (size_t i = 0; i < n; ++i) {
    const fs::path dir = run_directory(out, plan.runs[i].name);
    const auto before = started_with(dir);
    if (started_otherwise(plan.runs[i], before)) {
      const Held held = held_by_a_longer_run(plan.runs[i], dir, *before);
      const bool continues = continues_the_run(*before, plan.runs[i].args);
      if (held == Held::kTrained || held == Held::kDiverged) {
        status[i] = held == Held::kTrained ? Status::kSkipped : Status::kDiverged;
        held_runs.push_back(i);
      } else if (continues && marked_diverged(dir)) {
        // It diverges again, checkpoint or not: its new schedule gives the steps it trained the same rates.
        status[i] = Status::kDiverged;
      } else if (!holds_checkpoints(dir.string())) {
        restarted.push_back(dir.string());
      } else if (held == Held::kUnfinished) {
        shortened.push_back(i);
      } else if (continues) {
        continued.push_back(i);
      } else {
        throw UsageError("run directory '" + dir.string() + "' was started with other settings (see its sweep_args.txt) "
                         "and holds checkpoints; delete it or choose another sweep.out (a sweep goes on from such a run "
                         "only where the new settings continue it: more steps, and the same rate at every step it trained)");
      }
      continue;
    }
    if (finished_earlier(plan.runs[i], out))
      status[i] = marked_diverged(dir) ? Status::kDiverged : Status::kSkipped;
    else if (before)
      if (auto changes = result_free_changes(*before, plan.runs[i].args); !changes.empty())
        carried_out_otherwise[i] = std::move(changes);
  }
  require_the_trained_settings(plan, out, restarted);
  for (const auto& dir : restarted)
    progress << "sweep: " << dir << " was started with other settings and holds no checkpoint; moved aside to "
             << move_run_directory_aside(dir) << std::endl;
  for (const size_t i : held_runs)
    progress << "sweep: " << plan.runs[i].name << " holds a longer run (see its sweep_args.txt) whose first "
             << plan.runs[i].steps << " steps are this run's: "
             << (status[i] == Status::kSkipped ? "nothing to train" : "it diverged before step " + std::to_string(plan.runs[i].steps))
             << std::endl;
  for (const size_t i : continued)
    progress << "sweep: " << plan.runs[i].name << " goes on from its checkpoints to step " << plan.runs[i].steps
             << " (the new settings continue it: the same rate at every step it trained)" << std::endl;
  for (const auto& [i, changes] : carried_out_otherwise)
    progress << "sweep: " << plan.runs[i].name << " goes on with " << changes
             << " (settings that change no result, since it started)" << std::endl;
  for (const size_t i : shortened)
    progress << "sweep: " << plan.runs[i].name << " holds a longer run (see its sweep_args.txt) stopped before step "
             << plan.runs[i].steps << ", whose first " << plan.runs[i].steps
             << " steps are this run's: it goes on from its checkpoints as this run" << std::endl;
  size_t skipped = 0;
  for (auto s : status) skipped += s == Status::kSkipped || s == Status::kDiverged;
  const CoresForEachRun cores(jobs);
  const common::ScopedEnvironment own_processes(kNoLauncher);
  progress << "sweep: " << n << " runs, " << skipped << " finished before, " << jobs << " at a time (" << cores.cores()
           << " core(s) each); logs in " << (fs::path(out) / "runs").string() << std::endl;

  InterruptHandlers handlers;
  std::map<pid_t, size_t> running;
  std::map<size_t, std::chrono::steady_clock::time_point> started;
  size_t finished_now = 0;
  auto done = [&](Status s) { return s == Status::kFinished || s == Status::kSkipped; };
  auto count_done = [&](size_t i, const std::string& what) {
    ++finished_now;
    progress << "sweep: " << plan.runs[i].name << " " << what << " (" << finished_now + skipped << "/" << n << ")" << std::endl;
  };
  auto stop_all = [&] {
    for (const auto& [pid, index] : running) ::kill(pid, SIGTERM);
    for (const auto& [pid, index] : running) {
      int ignored = 0;
      while (::waitpid(pid, &ignored, 0) < 0 && errno == EINTR) {
      }
    }
  };
  while (true) {
    for (size_t i = 0; i < n && static_cast<int64_t>(running.size()) < jobs; ++i) {
      if (status[i] != Status::kPending) continue;
      const bool reads_log = plan.runs[i].reads_log_of >= 0;
      const int dep = reads_log ? plan.runs[i].reads_log_of : plan.runs[i].depends_on;
      if (dep >= 0) {
        const auto d = status[static_cast<size_t>(dep)];
        if (d == Status::kFailed || d == Status::kBlocked) {
          status[i] = Status::kBlocked;
          progress << "sweep: " << plan.runs[i].name << " not started: " << plan.runs[static_cast<size_t>(dep)].name << " failed" << std::endl;
          continue;
        }
        if (d == Status::kDiverged && reads_log) {
          // Its schedule comes from that run's log (a refinement of its norms), which ends in a non-finite step:
          // there is no schedule to train, and the result goes with its source's.
          status[i] = Status::kDiverged;
          count_done(i, "diverged: the run whose log its schedule reads, " + plan.runs[static_cast<size_t>(dep)].name + ", diverged");
          continue;
        }
        if (d == Status::kDiverged) {
          // A branch equals its main run up to the fork: if the main run diverged before it (no checkpoint
          // there), so does the branch; otherwise the branch starts from that checkpoint.
          const auto& main = plan.runs[static_cast<size_t>(dep)];
          if (!fs::exists(train::checkpoint_path(run_directory(out, main.name), plan.runs[i].start_step))) {
            status[i] = Status::kDiverged;
            count_done(i, "diverged: " + main.name + " diverged before its fork at step " + std::to_string(plan.runs[i].start_step));
            continue;
          }
        } else if (!done(d)) {
          continue;
        }
      }
      const fs::path dir = run_directory(out, plan.runs[i].name);
      fs::create_directories(dir);
      lrkit::write_text_atomically(dir / "sweep_args.txt", joined(plan.runs[i].args));
      fs::remove(dir / "sweep_done");  // a run continued for more steps is not done
      running[start_run(plan.runs[i], dir)] = i;
      started[i] = std::chrono::steady_clock::now();
      status[i] = Status::kRunning;
      const int64_t first = first_step(plan.runs[i], dir);
      progress << "sweep: started " << plan.runs[i].name << " (" << plan.runs[i].steps - first << " steps"
               << (first > plan.runs[i].start_step ? ", from its checkpoint at step " + std::to_string(first) : "") << ")"
               << std::endl;
    }
    if (running.empty()) break;
    int wait_status = 0;
    const pid_t pid = ::waitpid(-1, &wait_status, 0);
    if (g_interrupted) {
      stop_all();
      throw std::runtime_error("interrupted; " + std::to_string(running.size()) +
                               " running run(s) stopped (their checkpoints are kept); run the same command again to resume");
    }
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error("waitpid failed while running the sweep");
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const size_t i = it->second;
    running.erase(it);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started[i]).count();
    const fs::path dir = run_directory(out, plan.runs[i].name);
    const int code = exit_code(wait_status);
    if (code == 0) {
      lrkit::write_text_atomically(dir / "sweep_done", "");
      status[i] = Status::kFinished;
      count_done(i, "finished in " + std::to_string(static_cast<int64_t>(seconds)) + " s");
    } else if (code == kExitDiverged) {  // a result (the peak is too high), not a failure to retry
      lrkit::write_text_atomically(dir / "sweep_done", kDivergedMark);
      status[i] = Status::kDiverged;
      count_done(i, "diverged (non-finite loss; see " + (dir / "train.txt").string() + ")");
    } else {
      status[i] = Status::kFailed;
      progress << "sweep: " << plan.runs[i].name << " " << how_it_failed(wait_status) << "; see " << (dir / "train.txt").string()
               << std::endl;
    }
  }
  std::vector<RunState> states;
  for (auto s : status)
    states.push_back(s == Status::kFinished   ? RunState::kFinished
                     : s == Status::kSkipped  ? RunState::kSkipped
                     : s == Status::kDiverged ? RunState::kDiverged
                     : s == Status::kFailed   ? RunState::kFailed
                                              : RunState::kBlocked);
  return states;
}

}  // namespace lrkit::cli
