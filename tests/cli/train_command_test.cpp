// `lrkit train` as users run it: data parallel through --nproc and through the
// real torchrun launcher, failures of a worker, and bad input.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <thread>

#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "test_files.hpp"

namespace {

using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;

std::string tiny_config() {
  static const std::string path = [] {
    std::string text;
    for (int i = 0; i < 500; ++i) text += "Blessed are the meek: for they shall inherit the earth. " + std::to_string(i) + "\n";
    const auto corpus = lrkit::testing::write_text("dp_corpus.txt", text);
    return lrkit::testing::write_text("dp.cfg", "[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n"
                                                "[data]\npath = " + corpus + "\n"
                                                "[train]\nsteps = 12\nbatch = 8\nlog_every = 6\nthreads = 1\n"
                                                "[eval]\nevery = 0\nbatches = 1\n"
                                                "[schedule]\nspec = cosine(peak=1e-2, warmup=2)\n");
  }();
  return path;
}

std::string out_dir(const std::string& name) {
  const auto dir = lrkit::testing::scratch_dir() / name;
  std::filesystem::remove_all(dir);
  return dir.string();
}

void expect_same_losses(const std::string& a_log, const std::string& b_log) {
  const auto a = lrkit::h5::read_series(a_log, "/train/loss");
  const auto b = lrkit::h5::read_series(b_log, "/train/loss");
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::fabs(a[i])) << "step " << i;
}

TEST(TrainCommand, OneAndTwoProcessesGiveTheSameLosses) {
  const auto one = out_dir("dp_one"), two = out_dir("dp_two");
  auto r = run_lrkit("train --config " + tiny_config() + " --out " + one);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_lrkit("train --config " + tiny_config() + " --nproc 2 --out " + two);
  ASSERT_EQ(r.code, 0) << r.out;
  size_t lines_at_end = 0;  // only rank 0 prints progress
  for (size_t at = r.out.find("step     12/12"); at != std::string::npos; at = r.out.find("step     12/12", at + 1)) ++lines_at_end;
  EXPECT_EQ(lines_at_end, 1u) << r.out;
  expect_same_losses(one + "/log.h5", two + "/log.h5");
  // /ranks holds each worker's local loss; their mean is the global loss.
  const auto ranks = lrkit::h5::read_matrix(two + "/log.h5", "/ranks/loss");
  const auto global = lrkit::h5::read_series(two + "/log.h5", "/train/loss");
  ASSERT_EQ(ranks.rows, static_cast<int64_t>(global.size()));
  ASSERT_EQ(ranks.columns, 2);
  for (int64_t i = 0; i < ranks.rows; ++i) {
    EXPECT_NEAR((ranks.at(i, 0) + ranks.at(i, 1)) / 2, global[static_cast<size_t>(i)], 1e-12);
    EXPECT_NE(ranks.at(i, 0), ranks.at(i, 1));  // different data per rank
  }
  EXPECT_EQ(lrkit::h5::read_matrix(one + "/log.h5", "/ranks/grad_norm").columns, 1);
}

TEST(TrainCommand, RunsUnderTheRealTorchrunLauncher) {
  const auto one = out_dir("tr_one"), two = out_dir("tr_two");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + one).code, 0);
  // --redirects/--tee 1: Debian's torch 1.13 launcher fails under Python 3.11 with
  // their default 0 (Std.from_str("0") returns None there).
  const auto r = run_command("/usr/bin/python3 -m torch.distributed.run --redirects 1 --tee 1 --nproc_per_node 2 --master_port " +
                             std::to_string(29600 + getpid() % 300) + " --no_python " + LRKIT_BINARY +
                             " train --config " + tiny_config() + " --out " + two);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_losses(one + "/log.h5", two + "/log.h5");
}

TEST(TrainCommand, AKilledWorkerStopsItsPeerWithAClearMessage) {
  const auto dir = out_dir("dp_killed");
  const std::string log = dir + ".txt";
  const pid_t launcher = fork();
  ASSERT_GE(launcher, 0);
  if (launcher == 0) {
    const std::string cmd = std::string(LRKIT_BINARY) + " train --config " + tiny_config() +
                            " --train.steps=100000 --nproc 2 --dist.timeout_s=20 --out " + dir + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the workers to be training, then kill rank 1.
  std::string workers;
  for (int i = 0; i < 200 && std::count(workers.begin(), workers.end(), '\n') < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    workers = run_command("pgrep -P " + std::to_string(launcher)).out;
  }
  ASSERT_EQ(std::count(workers.begin(), workers.end(), '\n'), 2) << workers;
  std::this_thread::sleep_for(std::chrono::seconds(2));
  const pid_t second = std::stoi(workers.substr(workers.find('\n') + 1));
  kill(second, SIGKILL);
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  waitpid(launcher, &status, 0);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  const auto output = run_command("cat " + log).out;
  EXPECT_NE(output.find("failed"), std::string::npos) << output;
  EXPECT_LT(seconds, 60.0) << "the launcher must not hang on a dead worker";
}

TEST(TrainCommand, BadInputExitsTwoWithOneLine) {
  for (const char* args : {"train --train.stepz=3", "train --data.path=/nonexistent.txt",
                                  "train --config /nonexistent.cfg", "train --nproc 0",
                                  "train --schedule.spec='cosine(peak=-1)'", "train --resume /nonexistent.pt"}) {
    const auto r = run_lrkit(std::string(args) + " --out " + out_dir("bad"));
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << args << "\n" << r.out;
  }
}

}  // namespace
