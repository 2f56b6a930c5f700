// A worker's share of the cores: LibTorch's intra-op threads and OpenBLAS's, the
// latter looked up at run time (Debian's LibTorch multiplies through OpenBLAS;
// PyTorch's wheels through MKL, where the OpenBLAS checks are skipped).
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include "lrkit/train/worker_threads.hpp"

namespace lrkit::train {
namespace {

int hardware_cores() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

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
    ::unsetenv("OPENBLAS_NUM_THREADS");
    ::unsetenv("LRKIT_CORES");
  }
  void TearDown() override {
    torch::set_num_threads(intra_op_);
    if (blas_.present()) blas_.set(openblas_);
    ::unsetenv("OPENBLAS_NUM_THREADS");
    ::unsetenv("LRKIT_CORES");
  }
  OpenBlas blas_;
  int intra_op_ = 1, openblas_ = 1;
};

TEST_F(WorkerThreadsTest, EachWorkerGetsItsShareOfTheCoresAndAtLeastOne) {
  EXPECT_EQ(cores_per_worker(1), hardware_cores());
  EXPECT_EQ(cores_per_worker(2), std::max(1, hardware_cores() / 2));
  EXPECT_EQ(cores_per_worker(4 * hardware_cores()), 1);
  EXPECT_EQ(cores_per_worker(0), hardware_cores());  // no local world known: the whole machine
}

TEST_F(WorkerThreadsTest, LrkitCoresSetsTheCoresToShare) {
  ::setenv("LRKIT_CORES", "6", 1);
  EXPECT_EQ(machine_cores(), 6);
  EXPECT_EQ(cores_per_worker(2), 3);
  EXPECT_EQ(cores_per_worker(4), 1);
  EXPECT_EQ(share_cores(0, 2).intra_op, 3);
  ::setenv("LRKIT_CORES", "", 1);  // empty: unset
  EXPECT_EQ(machine_cores(), hardware_cores());
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
  EXPECT_EQ(share_cores(3, 2).intra_op, 3);
  EXPECT_EQ(torch::get_num_threads(), 3);
  EXPECT_EQ(share_cores(0, 4 * hardware_cores()).intra_op, 1);
  EXPECT_EQ(torch::get_num_threads(), 1);
}

TEST_F(WorkerThreadsTest, OpenBlasGetsTheWorkersShareWhateverTheIntraOpSetting) {
  if (!blas_.present()) GTEST_SKIP() << "this process has no OpenBLAS (the BLAS is MKL or another)";
  blas_.set(hardware_cores());  // as OpenBLAS starts: the whole machine
  const WorkerThreads many = share_cores(1, 4 * hardware_cores());
  EXPECT_EQ(many.openblas, 1);
  EXPECT_EQ(blas_.get(), 1);  // what OpenBLAS itself now says
  EXPECT_FALSE(many.openblas_from_environment);
  EXPECT_EQ(describe(many), "threads per worker: 1 intra-op, 1 OpenBLAS");
  const WorkerThreads alone = share_cores(1, 1);  // one worker: train.threads=1 but OpenBLAS on every core
  EXPECT_EQ(alone.openblas, hardware_cores());
  EXPECT_EQ(blas_.get(), hardware_cores());
}

TEST_F(WorkerThreadsTest, OpenBlasNumThreadsInTheEnvironmentStands) {
  if (!blas_.present()) GTEST_SKIP() << "this process has no OpenBLAS (the BLAS is MKL or another)";
  blas_.set(1);
  ::setenv("OPENBLAS_NUM_THREADS", "1", 1);
  const WorkerThreads threads = share_cores(0, 1);  // the share would be every core
  EXPECT_EQ(threads.openblas, 1);
  EXPECT_EQ(blas_.get(), 1);
  EXPECT_TRUE(threads.openblas_from_environment);
  EXPECT_EQ(describe(threads), "threads per worker: " + std::to_string(hardware_cores()) +
                                   " intra-op, 1 OpenBLAS (OPENBLAS_NUM_THREADS)");
}

TEST(WorkerThreadsDescription, WithoutOpenBlasOnlyTheIntraOpCount) {
  EXPECT_EQ(describe(WorkerThreads{4, 0, false}), "threads per worker: 4 intra-op");
}

}  // namespace
}  // namespace lrkit::train
