// A training run in the background, for the tests that signal or kill it (or
// its launcher) while it trains: starting it, waiting for its workers and
// checkpoints, and checking how it stopped.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace lrkit::testing {

// The shell command `command` in the background, as the returned process itself (exec); its output goes to LOG.
inline pid_t start_command(const std::string& command, const std::string& log) {
  const pid_t pid = fork();
  if (pid == 0) {
    const std::string cmd = "exec " + command + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

// `lrkit train ARGS` in the background; its output goes to LOG.
inline pid_t start_train(const std::string& args, const std::string& log) {
  return start_command(std::string(LRKIT_BINARY) + " train " + args, log);
}

inline bool wait_for(const std::function<bool()>& ready, double seconds = 20,
                     std::chrono::milliseconds poll = std::chrono::milliseconds(50)) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (ready()) return true;
    std::this_thread::sleep_for(poll);
  }
  return false;
}

// Alive and not a zombie (an orphan's zombie waits for whoever adopted it to reap it).
inline bool running(pid_t pid) {
  if (kill(pid, 0) != 0) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  stat >> pid_field >> name >> state;
  return state != "Z";
}

// The 2 workers that `launcher` started (its children), once they have written checkpoint 10 into DIR (empty after
// 60 s without).
inline std::vector<pid_t> workers_once_checkpointed(pid_t launcher, const std::string& dir) {
  std::string listed;
  const bool ready = wait_for([&] {
    listed = run_command("pgrep -P " + std::to_string(launcher)).out;
    return count_lines(listed) == 2 && std::filesystem::exists(dir + "/checkpoints/step_0000000010.pt");
  }, 60);
  std::vector<pid_t> workers;
  for (size_t at = 0; ready && at < listed.size(); at = listed.find('\n', at) + 1)
    workers.push_back(std::stoi(listed.substr(at)));
  return workers;
}

// A stopped run says where it stopped, once; its log ends at that step and closes cleanly (no repair needed), and
// a checkpoint of that very step exists. Returns the step (-1 when the output does not say it).
inline int64_t expect_a_clean_stop(const std::string& dir, const std::string& output, const std::string& signal_name) {
  const std::string said = "lrkit train: " + signal_name + ": stopped after ";
  const auto at = output.find(said);
  EXPECT_NE(at, std::string::npos) << output;
  if (at == std::string::npos) return -1;
  EXPECT_EQ(output.find(said, at + 1), std::string::npos) << "rank 0 alone reports the stop\n" << output;
  const int64_t steps = std::stoll(output.substr(at + said.size()));
  const std::string checkpoint = dir + "/checkpoints/step_" + std::string(10 - std::to_string(steps).size(), '0') +
                                 std::to_string(steps) + ".pt";
  EXPECT_TRUE(std::filesystem::exists(checkpoint)) << checkpoint << "\n" << output;
  EXPECT_NE(output.find("checkpoint: " + checkpoint), std::string::npos) << output;
  const auto check = run_lrkit("log check " + dir + "/log.h5");
  EXPECT_EQ(check.code, 0) << "closed, not left for a repair: " << check.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), static_cast<size_t>(steps));
  return steps;
}

}  // namespace lrkit::testing
