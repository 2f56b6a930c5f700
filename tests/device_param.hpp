// Tests that run on each device: instantiate a TEST_P suite with
// LRKIT_ON_DEVICES(Suite) to get Cpu/Suite.* and Cuda/Suite.*; the Cuda ones
// skip with the reason where LibTorch sees no GPU, and CTest labels them gpu
// (tests/CMakeLists.txt discovers "*Cuda*" separately).
#pragma once

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <torch/version.h>

#include <string>

namespace lrkit::testing {

class OnDevice : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (cuda() && !torch::cuda::is_available())
      GTEST_SKIP() << "no CUDA device visible to this LibTorch (" << TORCH_VERSION << "): the GPU twin is skipped";
  }
  bool cuda() const { return GetParam() == "cuda"; }
  torch::Device device() const { return cuda() ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU); }
  // `lrkit train` arguments that put the run on this device; several workers share GPU 0 over Gloo.
  std::string train_args() const { return cuda() ? " --train.device=cuda --dist.backend=gloo" : ""; }
  // A name that differs per device (output directories).
  std::string named(const std::string& name) const { return name + "_" + GetParam(); }
};

}  // namespace lrkit::testing

#define LRKIT_ON_DEVICES(suite)                                                   \
  INSTANTIATE_TEST_SUITE_P(Cpu, suite, ::testing::Values(std::string("cpu")));    \
  INSTANTIATE_TEST_SUITE_P(Cuda, suite, ::testing::Values(std::string("cuda")))
