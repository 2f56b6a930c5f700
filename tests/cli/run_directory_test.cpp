// `lrkit train` owns its run directory: one writer at a time, an earlier run is
// never mixed into a new one, a finished run resumes to a no-op, and a signal
// to the --nproc launcher stops its workers too.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace lrkit::testing {
namespace {

namespace fs = std::filesystem;

// `lrkit train ARGS` in the background; its output goes to LOG.
pid_t start_train(const std::string& args, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + std::string(LRKIT_BINARY) + " train " + args + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

bool wait_for(const std::function<bool()>& ready, double seconds = 20) {
  for (int i = 0; i < static_cast<int>(seconds * 20); ++i) {
    if (ready()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

TEST(RunDirectory, ASecondWriterIsRefusedAndTheFirstLogStaysIntact) {
  const auto dir = out_dir("two_writers");
  const pid_t first = start_train("--config " + tiny_config() + " --train.steps=100000 --log.flush_every=1 --out " + dir,
                                  dir + ".first.txt");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir + "/log.h5") && fs::file_size(dir + "/lrkit.lock") > 0; }));
  const auto second = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --out " + dir);
  EXPECT_EQ(second.code, 2) << second.out;
  EXPECT_NE(second.out.find("is in use by another lrkit train (pid " + std::to_string(first) + ")"), std::string::npos)
      << second.out;
  kill(first, SIGTERM);
  int status = 0;
  waitpid(first, &status, 0);
  const auto steps = h5::read_series(dir + "/log.h5", "/train/step");  // readable, one row per step
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i], static_cast<double>(i));
}

TEST(RunDirectory, AnEarlierRunIsRefusedMovedAsideWithOverwriteAndAFinishedResumeIsANoOp) {
  const auto dir = out_dir("reused");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  auto r = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds an earlier run"), std::string::npos) << r.out;
  r = run_lrkit("train --config " + tiny_config() + " --resume auto --out " + dir);  // finished: nothing to do
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("finished at step 12 already; nothing to do"), std::string::npos) << r.out;
  r = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --overwrite --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  const auto moved = r.out.find("moved the earlier run in " + dir + " to ");
  ASSERT_NE(moved, std::string::npos) << r.out;
  int asides = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
    if (entry.path().filename().string().rfind("reused.old-", 0) == 0) {
      ++asides;
      EXPECT_TRUE(fs::exists(entry.path() / "log.h5"));
      fs::remove_all(entry.path());
    }
  EXPECT_EQ(asides, 1);
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), 12u);
}

TEST(RunDirectory, ASignalToTheLauncherAloneStopsEveryWorkerAndTheRunResumes) {
  const auto dir = out_dir("launcher_signal");
  const std::string args = "--config " + tiny_config() + " --nproc 2 --checkpoint.every=10 --out " + dir;
  const pid_t launcher = start_train(args + " --train.steps=100000", dir + ".txt");
  std::string workers;
  ASSERT_TRUE(wait_for([&] {
    workers = run_command("pgrep -P " + std::to_string(launcher)).out;
    return count_lines(workers) == 2 && fs::exists(dir + "/checkpoints/step_0000000010.pt");
  }, 60)) << workers;
  kill(launcher, SIGTERM);  // the launcher's PID only, as a job scheduler or `kill PID` does
  int status = 0;
  waitpid(launcher, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  for (size_t at = 0; at < workers.size();) {
    const pid_t worker = std::stoi(workers.substr(at));
    EXPECT_NE(kill(worker, 0), 0) << "worker " << worker << " is still alive";
    at = workers.find('\n', at) + 1;
  }
  // Resumable: the newest checkpoint continues to a nearby end, one log row per step.
  const auto newest = run_command("ls " + dir + "/checkpoints | grep -v replica | sort | tail -n 1").out;
  const int64_t at_step = std::stoll(newest.substr(5, 10));
  const int64_t end = at_step + 5;
  const auto r = run_lrkit("train " + args + " --resume auto --train.steps=" + std::to_string(end));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), static_cast<size_t>(end));
}

}  // namespace
}  // namespace lrkit::testing
