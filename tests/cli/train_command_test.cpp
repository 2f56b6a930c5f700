// `lrkit train` as users run it: data parallel through --nproc (other launchers:
// train_launchers_test.cpp), failures of a worker, and bad input.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "address_space.hpp"
#include "device_param.hpp"
#include "lrkit/h5/file.hpp"
#include "openblas.hpp"
#include "process_cpus.hpp"
#include "run_command.hpp"
#include "test_files.hpp"
#include "tiny_run.hpp"

namespace {

using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;
using lrkit::testing::out_dir;
using lrkit::testing::expect_same_losses;


// The multi-worker checks run on each device; on CUDA every worker shares GPU 0 over Gloo with CUDA tensors.
class TrainCommandOnDevice : public lrkit::testing::OnDevice {};

TEST_P(TrainCommandOnDevice, OneAndTwoProcessesGiveTheSameLosses) {
  const auto one = out_dir(named("dp_one")), two = out_dir(named("dp_two"));
  const std::string peak = " --train.peak_tflops=2";  // MFU's denominator: per device (the CPU's: per machine)
  auto r = run_lrkit("train --config " + tiny_config() + train_args() + peak + " --out " + one);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_lrkit("train --config " + tiny_config() + train_args() + peak + " --nproc 2 --out " + two);
  ASSERT_EQ(r.code, 0) << r.out;
  // Both workers train on one device (this machine's CPU, or GPU 0 shared over Gloo): one device's peak.
  for (const auto& dir : {one, two})
    EXPECT_EQ(std::stod(lrkit::h5::read_string_attributes(dir + "/log.h5", "/start").at("peak_flops")), 2e12) << dir;
  size_t lines_at_end = 0;  // only rank 0 prints progress
  for (size_t at = r.out.find("step     12/12"); at != std::string::npos; at = r.out.find("step     12/12", at + 1)) ++lines_at_end;
  EXPECT_EQ(lines_at_end, 1u) << r.out;
  // Each worker takes half the cores for OpenBLAS (where LibTorch multiplies through it), not all of them.
  const int half = std::max(1, lrkit::testing::process_cpus() / 2);
  EXPECT_NE(r.out.find("threads per worker: " + lrkit::testing::worker_threads_text(1, half) + "\n"), std::string::npos) << r.out;
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

TEST_P(TrainCommandOnDevice, ReweightingGivesTheSameRunOnOneAndTwoWorkers) {
  const auto one = out_dir(named("rw_one")), two = out_dir(named("rw_two"));
  const std::string reweight = " --reweight.strategy=quadratic --reweight.strength=0.4";
  auto r = run_lrkit("train --config " + tiny_config() + train_args() + reweight + " --out " + one);
  ASSERT_EQ(r.code, 0) << r.out;
  r = run_lrkit("train --config " + tiny_config() + train_args() + reweight + " --nproc 2 --train.accumulation=2 --out " + two);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_losses(one + "/log.h5", two + "/log.h5");
  const auto a = lrkit::h5::read_series(one + "/log.h5", "/reweight/max_min_ratio");
  const auto b = lrkit::h5::read_series(two + "/log.h5", "/reweight/max_min_ratio");
  ASSERT_EQ(a.size(), b.size());
  // The ratio of the extreme weights follows single samples' losses, not their mean. On CUDA the fp32 matmuls run
  // in TF32 and one worker's GEMMs have other shapes than two workers' half batches: up to 2.4e-4 apart on an H200.
  const double tolerance = cuda() ? 1e-3 : 1e-4;
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], tolerance * a[i]) << "step " << i;
  EXPECT_GT(a.back(), 1.2);
}


// Starts `lrkit train --nproc 2` on a long run in the background, waits until
// both workers are training, does `to_rank_1` to worker 1 and returns how
// long the launcher took to exit, its status and its output.
struct FailedRun {
  double seconds = 0;
  int status = 0;
  std::string output;
};

template <typename Action>
FailedRun fail_worker_one(const std::string& name, Action to_rank_1) {
  const auto dir = out_dir(name);
  const std::string log = dir + ".txt";
  FailedRun result;
  const pid_t launcher = fork();
  if (launcher < 0) return result;
  if (launcher == 0) {
    const std::string cmd = std::string(LRKIT_BINARY) + " train --config " + tiny_config() +
                            " --train.steps=100000 --nproc 2 --dist.timeout_s=5 --out " + dir + " > " + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  std::string workers;
  for (int i = 0; i < 200 && std::count(workers.begin(), workers.end(), '\n') < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    workers = run_command("pgrep -P " + std::to_string(launcher)).out;
  }
  EXPECT_EQ(std::count(workers.begin(), workers.end(), '\n'), 2) << workers;
  // Training has begun once rank 0 wrote its log (after the rendezvous): a loaded machine can take
  // longer than any fixed pause to get there.
  for (int i = 0; i < 600 && !std::filesystem::exists(dir + "/log.h5"); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const pid_t second = std::stoi(workers.substr(workers.find('\n') + 1));
  to_rank_1(second);
  const auto start = std::chrono::steady_clock::now();
  waitpid(launcher, &result.status, 0);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.output = run_command("cat " + log).out;
  kill(second, SIGKILL);  // never leave a stopped worker behind, whatever happened
  return result;
}

TEST(TrainCommand, AKilledWorkerStopsItsPeerWithAClearMessage) {
  const auto r = fail_worker_one("dp_killed", [](pid_t worker) { kill(worker, SIGKILL); });
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0);
  // SIGKILL is mostly the kernel's out-of-memory killer, which leaves the worker no word of its own.
  EXPECT_NE(r.output.find("lrkit train: worker 1 was killed by SIGKILL (the kernel's out-of-memory killer sends it"),
            std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 30.0) << "the launcher must not hang on a dead worker";
}

TEST(TrainCommand, AHungWorkerFailsTheRunWithinTheTimeout) {
  // SIGSTOP: the worker is alive but never answers, the case a timeout exists for.
  const auto r = fail_worker_one("dp_hung", [](pid_t worker) { kill(worker, SIGSTOP); });
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) != 0);
  EXPECT_NE(r.output.find("hung for more than 5 s"), std::string::npos) << r.output;
  EXPECT_LT(r.seconds, 30.0) << "dist.timeout_s=5 plus the launcher's 5 s grace";
}

// Rank 0 evaluates (and checkpoints) alone while the others wait: seconds here, minutes for a large model's
// checkpoint on a network filesystem. The others wait for it at a barrier of its own timeout, not in the next
// step's all-reduce, which gave up after dist.timeout_s and failed the run.
TEST(TrainCommand, TheOthersWaitForRankZerosEvaluationBeyondTheCollectiveTimeout) {
  // 20,000 evaluation batches take about 3 s on one core here, 3 times the collective timeout.
  const std::string slow_evaluation = " --train.steps=3 --eval.every=2 --eval.batches=20000 --nproc 2 --dist.timeout_s=1";
  const auto r = run_lrkit("train --config " + tiny_config() + slow_evaluation + " --out " + out_dir("dp_slow_eval"));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("eval   step 2  heldout loss"), std::string::npos) << r.out;
  const auto limited = run_lrkit("train --config " + tiny_config() + slow_evaluation + " --dist.rank0_timeout_s=1 --out " +
                                 out_dir("dp_slow_eval_limited"));
  EXPECT_EQ(limited.code, 1) << limited.out;
  EXPECT_NE(limited.out.find("lrkit train: rank 1: the wait for rank 0 to evaluate and checkpoint step 2 "
                             "(dist.rank0_timeout_s) failed after 1 s (the limit: 1 s): "),
            std::string::npos)
      << limited.out;
}

TEST_P(TrainCommandOnDevice, TwoWorkerRunResumesBitForBitWithDropout) {
  const auto dir = out_dir(named("dp_resume"));
  const std::string args = "train --config " + tiny_config() + train_args() + " --nproc 2 --model.dropout=0.2 --checkpoint.every=6 --out " + dir;
  auto r = run_lrkit(args);
  ASSERT_EQ(r.code, 0) << r.out;
  const auto full = lrkit::h5::read_series(dir + "/log.h5", "/train/loss");
  const auto full_ranks = lrkit::h5::read_matrix(dir + "/log.h5", "/ranks/loss");
  ASSERT_EQ(full.size(), 12u);
  std::filesystem::remove(dir + "/checkpoints/step_0000000012.pt");
  r = run_lrkit(args + " --resume auto");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("at step 6"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(dir + "/log.h5", "/train/loss"), full);
  EXPECT_EQ(lrkit::h5::read_matrix(dir + "/log.h5", "/ranks/loss").values, full_ranks.values);
  EXPECT_EQ(lrkit::h5::read_series(dir + "/log.h5", "/checkpoints/step"), (std::vector<double>{6, 12}));
}

TEST_P(TrainCommandOnDevice, DiagnosticsAgreeAcrossTheirFormsOverGloo) {
  const auto dir = out_dir(named("dp_diag"));
  const auto r = run_lrkit("train --config " + tiny_config() + train_args() +
                           " --nproc 2 --diagnostics.pairwise=exact --diagnostics.matrix_every=4 --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string log = dir + "/log.h5";
  const auto norms = lrkit::h5::read_matrix(log, "/ranks/grad_norm");
  const auto inner = lrkit::h5::read_series(log, "/diagnostics/inner_pairwise");
  const auto exact = lrkit::h5::read_series(log, "/diagnostics/cos_pairwise");
  const auto matrix = lrkit::h5::read_matrix(log, "/diagnostics/cos_matrix");
  ASSERT_EQ(exact.size(), 12u);
  // Two workers: the exact mean pairwise cosine is cos(g0, g1) = (g0 . g1) / (|g0| |g1|),
  // and the scalar form gives g0 . g1 without any extra communication.
  for (size_t i = 0; i < exact.size(); ++i) {
    const auto row = static_cast<int64_t>(i);
    EXPECT_NEAR(exact[i], inner[i] / (norms.at(row, 0) * norms.at(row, 1)), 1e-4) << "step " << i;
    EXPECT_GT(exact[i], -1.0);
    EXPECT_LT(exact[i], 0.999);
  }
  EXPECT_EQ(lrkit::h5::read_series(log, "/diagnostics/cos_matrix_step"), (std::vector<double>{4, 8, 12}));
  ASSERT_EQ(matrix.columns, 4);
  for (int64_t k = 0; k < matrix.rows; ++k) {
    EXPECT_EQ(matrix.at(k, 0), 1.0);
    EXPECT_NEAR(matrix.at(k, 1), exact[static_cast<size_t>(4 * k + 3)], 0.08) << "sketch estimate at matrix row " << k;
  }
}

TEST(TrainCommand, IdenticalDataOnAllRanksIsTheZeroDispersionControl) {
  const auto dir = out_dir("dp_identical");
  const auto r = run_lrkit("train --config " + tiny_config() +
                           " --nproc 2 --dist.data_split=identical --dist.dropout_seed=shared --model.dropout=0.1"
                           " --diagnostics.pairwise=exact --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string log = dir + "/log.h5";
  for (double s : lrkit::h5::read_series(log, "/diagnostics/loss_std")) EXPECT_EQ(s, 0.0);
  for (double s : lrkit::h5::read_series(log, "/diagnostics/grad_norm_std")) EXPECT_EQ(s, 0.0);
  for (double c : lrkit::h5::read_series(log, "/diagnostics/cos_pairwise")) EXPECT_NEAR(c, 1.0, 1e-5);
  for (double c : lrkit::h5::read_matrix(log, "/ranks/cos_to_mean").values) EXPECT_NEAR(c, 1.0, 1e-5);
}

TEST_P(TrainCommandOnDevice, FourWorkersWithHdetAndExactDiagnostics) {
  const auto dir = out_dir(named("dp_four_hdet"));
  const auto r = run_lrkit("train --config " + tiny_config() + train_args() +
                           " --nproc 4 --hdet.enabled=true --hdet.sync_every=4 --hdet.alpha=0.2"
                           " --diagnostics.pairwise=exact --out " + dir);
  ASSERT_EQ(r.code, 0) << r.out;
  const std::string log = dir + "/log.h5";
  const auto exact = lrkit::h5::read_series(log, "/diagnostics/cos_pairwise");
  ASSERT_EQ(exact.size(), 12u);
  for (double c : exact) {
    EXPECT_GT(c, -1.0);
    EXPECT_LT(c, 1.0);
  }
  const auto rates = lrkit::h5::read_matrix(log, "/hdet/lr/replica");
  ASSERT_EQ(rates.columns, 4);
  EXPECT_NE(rates.at(5, 0), rates.at(5, 3)) << "HDET spreads the rate over the 4 workers";
  for (double loss : lrkit::h5::read_series(log, "/train/loss")) EXPECT_TRUE(std::isfinite(loss));
}

LRKIT_ON_DEVICES(TrainCommandOnDevice);

// Refused in one line before the run directory exists: CUDA where LibTorch sees no GPU,
// and NCCL (dist.backend=auto on CUDA) with more workers than GPUs.
TEST(TrainCommand, CudaRequestsThatCannotBeServedAreRefusedBeforeAnythingStarts) {
  const auto dir = out_dir("cuda_refused");
  const int gpus = static_cast<int>(torch::cuda::device_count());
  const auto r = run_lrkit("train --config " + tiny_config() + " --train.device=cuda --nproc " + std::to_string(gpus + 1) +
                           " --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  const std::string expected = gpus == 0 ? "sees no CUDA device" : "NCCL needs one GPU per worker";
  EXPECT_NE(r.out.find(expected), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir)) << "refused before the run directory is made";
}

// The rules that need the worker count are checked by the launcher: one line, not one per worker and a
// "worker 0 failed", and no run directory.
TEST(TrainCommand, WorkerCountRulesAreRefusedOnceBeforeTheWorkersStart) {
  for (const std::string args : {"--train.batch=3", "--dist.desync_ranks=5", "--hdet.enabled=true --hdet.replicas_per_rank=3"}) {
    const auto dir = out_dir("world_refused");
    const auto r = run_lrkit("train --config " + tiny_config() + " --nproc 2 " + args + " --out " + dir);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(args == "--dist.desync_ranks=5" ? "names rank 5 but there are 2 workers" : "must be a multiple of workers (2)"),
              std::string::npos) << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << args;
  }
}

// So is a schedule: a bad spec, or one whose rate no optimizer can apply somewhere in the run (it once trained
// to a LibTorch overflow error at step 1, and a bad spec printed once per worker after the directory was made).
TEST(TrainCommand, AnUnusableScheduleIsRefusedOnceBeforeTheWorkersStart) {
  for (const std::string spec : {"wsd(", "exponential(1e-3, gamma=1e300)"}) {
    const auto dir = out_dir("schedule_refused");
    const auto r = run_lrkit("train --config " + tiny_config() + " --nproc 2 --schedule.spec='" + spec + "' --out " + dir);
    EXPECT_EQ(r.code, 2) << spec << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << spec << "\n" << r.out;
    EXPECT_EQ(r.out.rfind("lrkit train: schedule.spec: invalid schedule spec", 0), 0u) << r.out;
    if (spec != "wsd(") {
      EXPECT_NE(r.out.find("it is 1e+297 at step 1 of 0.."), std::string::npos) << r.out;
    }
    EXPECT_FALSE(std::filesystem::exists(dir)) << spec;
  }
}

// Those checks name the config file's line of each key they name that the file set, as a key's own rule does.
TEST(TrainCommand, RulesCheckedAtTheStartNameTheConfigFileLinesOfTheKeysTheFileSet) {
  const std::string in_file = "lrkit train: config file '" + tiny_config() + "' ";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--nproc 3", in_file + "line 10: train.batch (8) must be a multiple of workers (3)"},
      {"--train.steps=1", in_file + "line 17: schedule.spec: invalid schedule spec"},
      {"--nproc 3 --train.batch=10", "lrkit train: train.batch (10) must be a multiple of workers (3)"}};
  for (const auto& [args, expected] : cases) {
    const auto dir = out_dir("placed_refusal");
    const auto r = run_lrkit("train --config " + tiny_config() + " " + args + " --out " + dir);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(r.out.rfind(expected, 0), 0u) << args << "\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << args;
  }
}

TEST(TrainCommand, AMissingDataFileIsRefusedOnceBeforeTheWorkersStartOrTheRunDirectoryIsMade) {
  const auto tiny = lrkit::testing::write_text("too_small_corpus.txt", "In the beginning\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --data.path=" + tiny + "_missing", "does not exist or cannot be reached"},
      {" --data.sources=a=" + tiny + ",b=" + tiny, "bytes: too small for context 16"},
      {" --eval.sets=other=" + std::filesystem::path(tiny).parent_path().string(), "is a directory, not a file"},
      {" --data.path=no_such_folder/corpus.txt", "cannot be reached (relative to the working directory '"},
      {" --data.path=no_such_folder/kjv.txt", "'): prepare the default corpus with scripts/prepare_data.sh"}};
  for (const auto& [option, problem] : cases) {
    const bool default_corpus = option.find("kjv.txt") != std::string::npos;
    for (const char* workers : {"1", "2"}) {
      const auto dir = out_dir("data_refused");
      const auto r = run_lrkit("train --config " + tiny_config() + " --nproc " + workers + option + " --out " + dir);
      EXPECT_EQ(r.code, 2) << option << "\n" << r.out;
      EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << option << "\n" << r.out;
      EXPECT_EQ(r.out.rfind("lrkit train: data file '", 0), 0u) << r.out;
      EXPECT_NE(r.out.find(problem), std::string::npos) << r.out;
      EXPECT_EQ(r.out.find("prepare_data.sh") != std::string::npos, default_corpus) << r.out;
      EXPECT_FALSE(std::filesystem::exists(dir)) << option << " with " << workers << " worker(s)";
    }
  }
}


// A model too large for the machine's memory was killed by the kernel while it built its weights ("Killed", exit
// 137, no message). It is refused before anything starts, with what it needs, what there is and which keys to lower.
TEST(TrainCommand, ARunThatCannotFitInTheMemoryIsRefusedBeforeAnythingStarts) {
  for (const char* workers : {"1", "2"}) {
    const auto dir = out_dir("too_large");
    const auto r = run_lrkit("train --config " + tiny_config() + " --model.width=65536 --nproc " + workers + " --out " + dir);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << r.out;
    EXPECT_EQ(r.out.rfind("lrkit train: the run needs at least ", 0), 0u) << r.out;
    EXPECT_NE(r.out.find("in weights, gradients and AdamW's two moments"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; lower model.width or model.layers"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("2 workers on this machine, each at least ") != std::string::npos, std::string(workers) == "2")
        << r.out;
    EXPECT_FALSE(std::filesystem::exists(dir)) << workers << " worker(s)";
  }
  const auto dir = out_dir("too_large");
  const auto r = run_lrkit("train --config " + tiny_config() + " --train.batch=1073741824 --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("; raise train.accumulation (smaller micro-batches, the same result)"), std::string::npos) << r.out;
  EXPECT_FALSE(std::filesystem::exists(dir));
#if !defined(__SANITIZE_ADDRESS__)  // AddressSanitizer cannot start under an address-space limit
  // A process's address-space limit bounds its resident memory too: 102 GB of attention scores against 16 GB
  // (explicit attention: the fused form of LibTorch 2.x holds no scores).
  const auto limited = lrkit::testing::run_command("ulimit -v 16000000 && " + std::string(LRKIT_BINARY) + " train --config " +
                                                   tiny_config() + " --model.context=10000 --model.attention=explicit --data.heldout=0.45 "
                                                   "--train.batch=128 --out " + dir);
  EXPECT_EQ(limited.code, 2) << limited.out;
  EXPECT_NE(limited.out.find(" but the address-space limit (ulimit -v) allows 16.4 GB: "), std::string::npos) << limited.out;
  EXPECT_FALSE(std::filesystem::exists(dir));
#endif
}

// The run's "memory:" line counts what a worker certainly holds. It must stay below what real runs reach (their
// peak resident memory less the tiniest run's, LibTorch's own), and not far below: for a model whose weights
// dominate and one whose attention scores do.
TEST(TrainCommand, TheMemoryLineIsALowerBoundOfTheMeasuredPeak) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer's shadow memory and quarantine inflate the resident memory this test measures";
#endif
  struct Measured {
    double peak_bytes = 0;
    double estimate_bytes = 0;
  };
  const auto measure = [](const std::string& options) {
    const auto dir = out_dir("memory_measured");
    const std::string progress = dir + ".txt";
    const pid_t pid = fork();
    if (pid == 0) {
      const std::string cmd = "exec " + std::string(LRKIT_BINARY) + " train --config " + tiny_config() +
                              " --train.steps=3 --schedule.spec='constant(1e-3)' " + options + " --out " + dir + " > " + progress;
      execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    struct rusage usage {};
    EXPECT_EQ(wait4(pid, &status, 0, &usage), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << options;
    std::string out;
    std::getline(std::ifstream(progress), out, '\0');
    Measured m;
    m.peak_bytes = static_cast<double>(usage.ru_maxrss) * 1024;
    const std::string said = "\nmemory: at least ";
    const auto at = out.find(said);
    EXPECT_NE(at, std::string::npos) << out;
    if (at == std::string::npos) return m;
    const auto value = out.substr(at + said.size());
    const std::string unit = value.substr(value.find(' ') + 1, 2);
    m.estimate_bytes = std::stod(value) * (unit == "GB" ? 1e9 : unit == "MB" ? 1e6 : 1e3);
    return m;
  };
  const double libtorch = measure("").peak_bytes;
  for (const std::string options : {"--model.layers=2 --model.width=1024 --model.heads=4",
                                    "--model.width=32 --model.heads=8 --model.context=256 --train.batch=64 --model.attention=explicit"}) {
    const Measured run = measure(options);
    const double held = run.peak_bytes - libtorch;
    EXPECT_GT(run.estimate_bytes, 1e8) << options;  // the run is large enough to measure
    EXPECT_LE(run.estimate_bytes, held) << options << ": estimate " << run.estimate_bytes / 1e6 << " MB, measured "
                                        << held / 1e6 << " MB above LibTorch's " << libtorch / 1e6 << " MB";
    EXPECT_GE(run.estimate_bytes, 0.5 * held) << options << ": estimate " << run.estimate_bytes / 1e6 << " MB, measured "
                                              << held / 1e6 << " MB";
  }
}

TEST(TrainCommand, ANonFiniteLossExitsThreeOnOneAndTwoWorkers) {
  for (const char* workers : {"1", "2"}) {
    const auto dir = out_dir("dp_diverged");
    // HDET and diagnostics on: the diverged step's row goes into every per-step series.
    const auto r = run_lrkit("train --config " + tiny_config() + " --schedule.spec='constant(1e4)' --nproc " + workers +
                             " --diagnostics.enabled=true --hdet.enabled=true --out " + dir);
    EXPECT_EQ(r.code, 3) << workers << " worker(s)\n" << r.out;  // a sweep counts it as diverged, not failed
    // nan or inf: which one a blown-up model gives depends on the order of its sums on the CPU at hand.
    const std::string said = "lrkit train: non-finite training loss ";
    const auto at = r.out.find(said);
    ASSERT_NE(at, std::string::npos) << r.out;
    const auto step_at = r.out.find(" at step ", at);
    ASSERT_NE(step_at, std::string::npos) << r.out;
    const double step = std::stod(r.out.substr(step_at + 9));
    const auto log = dir + "/log.h5";
    const auto steps = lrkit::h5::read_series(log, "/train/step");
    ASSERT_FALSE(steps.empty());
    EXPECT_EQ(steps.back(), step) << "the diverged step is the log's last row";
    EXPECT_FALSE(std::isfinite(lrkit::h5::read_series(log, "/train/loss").back()));
    EXPECT_EQ(r.out.find("failed"), std::string::npos) << "a divergence is every worker's, not one failure\n" << r.out;
    for (const char* series : {"/ranks/loss", "/ranks/grad_norm", "/hdet/replica_loss", "/hdet/lr/replica"})
      EXPECT_EQ(lrkit::h5::read_matrix(log, series).rows, static_cast<int64_t>(steps.size())) << series;
    EXPECT_EQ(run_lrkit("log check " + dir).code, 0);
    const auto diagnosis = run_lrkit("diagnose " + dir);
    EXPECT_NE(diagnosis.out.find("is NaN/Inf from step " + std::to_string(static_cast<int64_t>(step))), std::string::npos)
        << diagnosis.out;
  }
}

// Only rank 0 evaluates: it alone exits 3, after the others ended with the run, and that is still the run's divergence.
TEST(TrainCommand, ANonFiniteLossAfterTheLastUpdateExitsThreeOnOneAndTwoWorkers) {
  for (const char* workers : {"1", "2"}) {
    const auto dir = out_dir("last_update_broke");
    const auto r = run_lrkit("train --config " + tiny_config() + " --train.steps=1 --schedule.spec='constant(1e30)' "
                             "--optim.clip=0 --nproc " + std::string(workers) + " --out " + dir);
    EXPECT_EQ(r.code, 3) << workers << " worker(s)\n" << r.out;
    EXPECT_NE(r.out.find("lrkit train: non-finite heldout loss "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; checkpoint " + dir + "/checkpoints/step_0000000001.pt holds those weights"), std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("failed"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("done:"), std::string::npos) << r.out;
    EXPECT_EQ(run_lrkit("log check " + dir).code, 0);
    // Asked again, the finished run says so, and that it diverged.
    const auto again = run_lrkit("train --config " + tiny_config() + " --train.steps=1 --schedule.spec='constant(1e30)' "
                                 "--optim.clip=0 --nproc " + std::string(workers) + " --resume auto --out " + dir);
    EXPECT_EQ(again.code, 3) << again.out;
    EXPECT_EQ(again.out.rfind("lrkit train: the run in " + dir + " finished at step 1 already, diverged: its heldout loss ", 0), 0u)
        << again.out;
    EXPECT_NE(again.out.find(" at the evaluation after the last step; nothing to do\n"), std::string::npos) << again.out;
    EXPECT_EQ(lrkit::testing::count_lines(again.out), 1) << again.out;
  }
}

const long address_space_at_start_kib = lrkit::testing::address_space_kib();

// A run too large for the memory it may use (here an address-space limit, so the allocation fails the same way
// whatever the machine's overcommit policy) ends with one line naming the keys that set its size, no backtrace.
TEST(TrainCommand, ARunThatCannotAllocateNamesItsSizeKeysInOneLine) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space: no address-space limit leaves it room to start";
#endif
  const auto dir = out_dir("out_of_memory");
  // Explicit attention's scores of 2 sequences x 2 heads x 5,000^2 positions, 400 MB a tensor (LibTorch 2's fused
  // attention holds none), against the address space LibTorch's libraries take plus 870 MB: the check before the run
  // lets it start (it certainly needs 0.8 GB), the allocations fail in its first step. The libraries' share is this
  // process's own address space, which links the same LibTorch: 0.73 GB of Debian's 1.13, and so much more of a CUDA
  // build's that a fixed limit of 1.6 GB left it no room to load libnccl. Read when the binary started: tests run
  // before this one in the same process (the whole binary at once) grow it with their threads and heaps.
  if (address_space_at_start_kib < 0) GTEST_SKIP() << "no VmSize in /proc/self/status: the libraries' share is unknown";
  const long limit_kib = address_space_at_start_kib + 870000;
  const auto r = lrkit::testing::run_command("ulimit -v " + std::to_string(limit_kib) + " && " + std::string(LRKIT_BINARY) +
                                             " train --config " + tiny_config() + " --model.context=5000 "
                                             "--model.attention=explicit --data.heldout=0.45 --train.batch=2 "
                                             "--train.steps=3 --schedule.spec='constant(1e-3)' --out " + dir);
  EXPECT_EQ(r.code, 1) << "address-space limit " << limit_kib << " KiB\n" << r.out;
  const std::string said = "lrkit train: out of memory on cpu at model.context = 5000, train.batch = 2, "
                           "train.accumulation = 1: raise train.accumulation (smaller micro-batches, the same result) or "
                           "lower train.batch, model.context or the model's size (LibTorch: ";
  const auto at = r.out.find(said);
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("can't allocate memory", at), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("frame #"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n', at) + 1, r.out.size()) << "the error is the last line, and one line\n" << r.out;
  EXPECT_EQ(run_lrkit("log check " + dir).code, 0);
}

// A full disk, as a file size limit makes it (its writes fail with EFBIG; the shell ignores SIGXFSZ for it): the log
// grows past the limit while the checkpoints stay under it. The run ends with one line and no HDF5 diagnostics, and
// `--resume auto` continues from the last checkpoint, the log's refused tail dropped.
TEST(TrainCommand, ALogWriteTheDiskRefusesEndsTheRunInOneLineAndAResumeContinuesIt) {
  const auto dir = out_dir("disk_full");
  const std::string run = " train --config " + tiny_config() + " --train.steps=3000 --checkpoint.every=200 "
                          "--checkpoint.keep=1 --diagnostics.enabled=true --train.log_every=1000 --out " + dir;
  // 400 blocks: 200 KiB where sh counts 512-byte blocks (dash), 400 KiB where it counts KiB (bash); a checkpoint is
  // 140 KiB, the whole log about 600 KiB.
  const auto r = lrkit::testing::run_command("trap '' XFSZ; ulimit -f 400 && exec " + std::string(LRKIT_BINARY) + run);
  EXPECT_EQ(r.code, 1) << "a failure at run time, not bad input\n" << r.out;
  const auto at = r.out.find("lrkit train: cannot write '");
  ASSERT_NE(at, std::string::npos) << r.out;
  EXPECT_NE(r.out.find("' in run log '" + dir + "/log.h5': File too large (the rows of the last flush before it are kept)\n", at),
            std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\n', at) + 1, r.out.size()) << "the error is the last line, and one line\n" << r.out;
  EXPECT_EQ(r.out.find("HDF5"), std::string::npos) << r.out;
  ASSERT_TRUE(std::filesystem::exists(dir + "/checkpoints")) << r.out;
  const auto resumed = run_lrkit(run + " --resume auto");
  EXPECT_EQ(resumed.code, 0) << resumed.out;
  const auto check = run_lrkit("log check " + dir);
  EXPECT_EQ(check.out, dir + "/log.h5: ok (3000 steps)\n") << check.out;
}

TEST(TrainCommand, BadInputExitsTwoWithOneLine) {
  for (const char* args : {"train --train.stepz=3", "train --data.path=/nonexistent.txt",
                                  "train --config /nonexistent.cfg", "train --nproc 0",
                                  "train --schedule.spec='cosine(peak=-1)'", "train --resume /nonexistent.pt",
                                  "train --dist.desync_ranks=one", "train --eval.sets=old",
                                  "train --diagnostics.pairwise=full"}) {
    const auto r = run_lrkit(std::string(args) + " --out " + out_dir("bad"));
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << args << "\n" << r.out;
  }
  const auto r = run_command("LRKIT_CORES=0 " + std::string(LRKIT_BINARY) + " train --config " + tiny_config() +
                             " --nproc 2 --out " + out_dir("bad"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "lrkit train: environment variable LRKIT_CORES='0' is not a whole number of cores >= 1\n");
}

}  // namespace
