// A worker's share of the cores: LibTorch's intra-op threads and OpenBLAS's, the
// latter looked up at run time (Debian's LibTorch multiplies through OpenBLAS;
// PyTorch's wheels through MKL, where the OpenBLAS checks are skipped).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "lrkit/train/worker_threads.hpp"
#include "process_cpus.hpp"

namespace lrkit::train {
namespace {

using lrkit::testing::process_cpus;

distributed::DistributedEnv workers_on_machine(int local_workers, const std::string& launcher = "torchrun") {
  distributed::DistributedEnv env;
  env.world_size = env.local_world_size = local_workers;
  env.launcher = launcher;
  return env;
}

// OpenBLAS's controls as this test finds them itself (not through the code under test); both null without it.
struct OpenBlas {
  int (*get)() = nullptr;
  void (*set)(int) = nullptr;
  OpenBlas() {
    void* get_symbol = ::dlsym(RTLD_DEFAULT, "openblas_get_num_threads");
    void* set_symbol = ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    std::memcpy(&get, &get_symbol, sizeof get);
    std::memcpy(&set, &set_symbol, sizeof set);
  }
  bool present() const { return get != nullptr && set != nullptr; }
};

// Puts back what a test changed: the other trainer tests in this process expect the defaults.
class WorkerThreadsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    intra_op_ = torch::get_num_threads();
    if (blas_.present()) openblas_ = blas_.get();
    CPU_ZERO(&affinity_);
    ASSERT_EQ(::sched_getaffinity(0, sizeof affinity_, &affinity_), 0);
    unset_variables();
  }
  void TearDown() override {
    torch::set_num_threads(intra_op_);
    if (blas_.present()) blas_.set(openblas_);
    ::sched_setaffinity(0, sizeof affinity_, &affinity_);
    unset_variables();
  }
  // Narrows this process's affinity mask to its first CPU, as taskset -c does (TearDown widens it again).
  bool run_on_one_cpu() const {
    int first = 0;
    while (!CPU_ISSET(first, &affinity_)) ++first;
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(first, &one);
    return ::sched_setaffinity(0, sizeof one, &one) == 0;
  }
  static void unset_variables() {
    for (const char* name : {"OPENBLAS_NUM_THREADS", "LRKIT_CORES", "SLURM_CPUS_PER_TASK"}) ::unsetenv(name);
  }
  cpu_set_t affinity_;
  OpenBlas blas_;
  int intra_op_ = 1, openblas_ = 1;
};

TEST_F(WorkerThreadsTest, EachWorkerGetsItsShareOfTheCoresAndAtLeastOne) {
  EXPECT_EQ(cores_per_worker(workers_on_machine(1)), process_cpus());
  EXPECT_EQ(cores_per_worker(workers_on_machine(2)), std::max(1, process_cpus() / 2));
  EXPECT_EQ(cores_per_worker(workers_on_machine(4 * process_cpus())), 1);
  EXPECT_EQ(cores_per_worker(workers_on_machine(0)), process_cpus());  // no local world known: the whole machine
}

// taskset, a container's cpuset and a batch system's binding all narrow the affinity mask, which the machine's
// CPU count (std::thread::hardware_concurrency) ignores.
TEST_F(WorkerThreadsTest, TheCoresAreThoseTheProcessMayRunOn) {
  EXPECT_EQ(usable_cpus(), process_cpus());
  if (process_cpus() < 2) GTEST_SKIP() << "one CPU: a narrower affinity mask cannot be told from the machine";
  ASSERT_TRUE(run_on_one_cpu());
  EXPECT_EQ(usable_cpus(), 1);
  EXPECT_EQ(machine_cores(), 1);
  EXPECT_EQ(share_cores(0, workers_on_machine(1)).intra_op, 1);
}

// srun starts one task per worker, each with --cpus-per-task CPUs of its own (bound to them or not): no
// division by the node's tasks. torchrun's workers, in a SLURM job or not, share their agent's CPUs.
TEST_F(WorkerThreadsTest, AnSrunTaskHasItsCpusPerTask) {
  ::setenv("SLURM_CPUS_PER_TASK", "1", 1);
  EXPECT_EQ(cores_per_worker(workers_on_machine(4, "slurm")), 1);
  ::setenv("SLURM_CPUS_PER_TASK", std::to_string(process_cpus()).c_str(), 1);
  EXPECT_EQ(cores_per_worker(workers_on_machine(2, "slurm")), process_cpus());
  EXPECT_EQ(cores_per_worker(workers_on_machine(2, "torchrun")), std::max(1, process_cpus() / 2));
  ::setenv("SLURM_CPUS_PER_TASK", std::to_string(process_cpus() + 8).c_str(), 1);  // never more than it may use
  EXPECT_EQ(cores_per_worker(workers_on_machine(1, "slurm")), process_cpus());
  ::setenv("LRKIT_CORES", "6", 1);  // the user's limit for the machine still wins
  EXPECT_EQ(cores_per_worker(workers_on_machine(2, "slurm")), 3);
  ::unsetenv("LRKIT_CORES");
  ::setenv("SLURM_CPUS_PER_TASK", "", 1);  // empty: unset
  EXPECT_EQ(cores_per_worker(workers_on_machine(2, "slurm")), std::max(1, process_cpus() / 2));
  ::setenv("SLURM_CPUS_PER_TASK", "8x", 1);
  try {
    cores_per_worker(workers_on_machine(2, "slurm"));
    ADD_FAILURE() << "SLURM_CPUS_PER_TASK=8x accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "environment variable SLURM_CPUS_PER_TASK='8x' is not a whole number of cores >= 1");
  }
}

TEST_F(WorkerThreadsTest, LrkitCoresSetsTheCoresToShare) {
  ::setenv("LRKIT_CORES", "6", 1);
  EXPECT_EQ(machine_cores(), 6);
  EXPECT_EQ(cores_per_worker(workers_on_machine(2)), 3);
  EXPECT_EQ(cores_per_worker(workers_on_machine(4)), 1);
  EXPECT_EQ(share_cores(0, workers_on_machine(2)).intra_op, 3);
  ::setenv("LRKIT_CORES", "", 1);  // empty: unset
  EXPECT_EQ(machine_cores(), process_cpus());
}

TEST_F(WorkerThreadsTest, AMalformedLrkitCoresIsNamed) {
  for (const char* bad : {"0", "-2", "two", "3x", "99999999999999999999"}) {
    ::setenv("LRKIT_CORES", bad, 1);
    try {
      machine_cores();
      ADD_FAILURE() << "LRKIT_CORES=" << bad << " accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), std::string("environment variable LRKIT_CORES='") + bad +
                                           "' is not a whole number of cores >= 1");
    }
  }
}

TEST_F(WorkerThreadsTest, IntraOpThreadsAreTrainThreadsOrTheShare) {
  EXPECT_EQ(share_cores(process_cpus(), workers_on_machine(2)).intra_op, process_cpus());  // more than the share
  EXPECT_EQ(torch::get_num_threads(), process_cpus());
  EXPECT_EQ(share_cores(0, workers_on_machine(4 * process_cpus())).intra_op, 1);
  EXPECT_EQ(torch::get_num_threads(), 1);
  EXPECT_EQ(intra_op_threads(0, workers_on_machine(2)), std::max(1, process_cpus() / 2));
}

// 4,096 threads on 2 CPUs made the test model's step take 25 s: refused, naming the CPUs, and nothing is set.
TEST_F(WorkerThreadsTest, MoreThreadsThanTheCpusTheProcessMayRunOnAreRefused) {
  const auto expect_refused = [](int64_t threads, int cpus) {
    const int before = torch::get_num_threads();
    try {
      share_cores(threads, workers_on_machine(1));
      ADD_FAILURE() << "train.threads = " << threads << " accepted on " << cpus << " CPU(s)";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()),
                "train.threads = " + std::to_string(threads) + " is more than the " + std::to_string(cpus) +
                    " CPU(s) this worker may run on (its affinity mask and CPU quota): the threads beyond them only "
                    "take turns, and every step slows down; use at most " + std::to_string(cpus) +
                    ", or 0 for the worker's share of the cores");
    }
    EXPECT_EQ(torch::get_num_threads(), before);
  };
  expect_refused(process_cpus() + 1, process_cpus());
  expect_refused(int64_t{1} << 40, process_cpus());  // no narrowing on the way to the message
  ::setenv("LRKIT_CORES", "64", 1);  // a share for the machine's runs, not more CPUs
  expect_refused(process_cpus() + 1, process_cpus());
  ::unsetenv("LRKIT_CORES");
  if (process_cpus() < 2) return;
  ASSERT_TRUE(run_on_one_cpu());
  expect_refused(2, 1);
  EXPECT_EQ(intra_op_threads(1, workers_on_machine(1)), 1);
}

TEST_F(WorkerThreadsTest, OpenBlasGetsTheWorkersShareWhateverTheIntraOpSetting) {
  if (!blas_.present()) GTEST_SKIP() << "this process has no OpenBLAS (the BLAS is MKL or another)";
  blas_.set(process_cpus());  // as OpenBLAS starts: the whole machine
  const WorkerThreads many = share_cores(1, workers_on_machine(4 * process_cpus()));
  EXPECT_EQ(many.openblas, 1);
  EXPECT_EQ(blas_.get(), 1);  // what OpenBLAS itself now says
  EXPECT_FALSE(many.openblas_from_environment);
  EXPECT_EQ(describe(many), "1 intra-op, 1 OpenBLAS");
  const WorkerThreads alone = share_cores(1, workers_on_machine(1));  // one worker: train.threads=1 but OpenBLAS on every core
  EXPECT_EQ(alone.openblas, process_cpus());
  EXPECT_EQ(blas_.get(), process_cpus());
}

TEST_F(WorkerThreadsTest, OpenBlasNumThreadsInTheEnvironmentStands) {
  if (!blas_.present()) GTEST_SKIP() << "this process has no OpenBLAS (the BLAS is MKL or another)";
  blas_.set(1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const WorkerThreads threads = share_cores(0, workers_on_machine(1));  // the share would be every core
  EXPECT_EQ(threads.openblas, 1);
  EXPECT_EQ(blas_.get(), 1);
  EXPECT_TRUE(threads.openblas_from_environment);
  EXPECT_EQ(describe(threads), std::to_string(process_cpus()) + " intra-op, 1 OpenBLAS (OPENBLAS_NUM_THREADS)");
}

TEST(WorkerThreadsDescription, WithoutOpenBlasOnlyTheIntraOpCount) {
  EXPECT_EQ(describe(WorkerThreads{4, 0, false}), "4 intra-op");
}

}  // namespace
}  // namespace lrkit::train
