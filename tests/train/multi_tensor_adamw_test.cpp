// MultiTensorAdamW against LibTorch's per-parameter AdamW: bit for bit on the
// CPU (the same arithmetic), within float rounding with the CUDA kernels, and
// through a checkpoint round trip in LibTorch's own format.
#include <gtest/gtest.h>

#include <sstream>

#include "device_param.hpp"
#include "lrkit/train/multi_tensor_adamw.hpp"

namespace lrkit::train {
namespace {

using Kernel = MultiTensorAdamW::Kernel;

struct Setup {
  std::vector<torch::Tensor> decayed, plain;
};

Setup parameters(const torch::Device& device) {
  torch::manual_seed(3);
  Setup s;
  for (auto shape : std::vector<std::vector<int64_t>>{{5, 7}, {3, 3}, {11}})
    s.decayed.push_back(torch::randn(shape).to(device).requires_grad_());
  for (auto shape : std::vector<std::vector<int64_t>>{{7}, {2, 2}}) s.plain.push_back(torch::randn(shape).to(device).requires_grad_());
  return s;
}

std::vector<torch::optim::OptimizerParamGroup> groups(const Setup& s, const torch::optim::AdamWOptions& o) {
  std::vector<torch::optim::OptimizerParamGroup> g;
  g.emplace_back(s.decayed, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(o).weight_decay(0.1)));
  g.emplace_back(s.plain, std::make_unique<torch::optim::AdamWOptions>(torch::optim::AdamWOptions(o).weight_decay(0.0)));
  return g;
}

// Steps both optimizers on the same gradients (a fresh draw each step, the
// learning rate changed between steps) and returns every parameter flattened.
torch::Tensor run(torch::optim::Optimizer& optimizer, Setup& s, int steps, int64_t from_step = 0) {
  for (int64_t step = from_step; step < from_step + steps; ++step) {
    torch::manual_seed(static_cast<uint64_t>(100 + step));
    for (auto* list : {&s.decayed, &s.plain})
      for (auto& p : *list) p.mutable_grad() = torch::randn(p.sizes()).to(p.device());
    for (auto& group : optimizer.param_groups()) group.options().set_lr(1e-2 / static_cast<double>(1 + step));
    optimizer.step();
  }
  std::vector<torch::Tensor> flat;
  for (auto* list : {&s.decayed, &s.plain})
    for (auto& p : *list) flat.push_back(p.detach().reshape({-1}).to(torch::kCPU));
  return torch::cat(flat);
}

const auto kOptions = torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8);

class MultiTensorAdamWOnDevice : public lrkit::testing::OnDevice {};

TEST_P(MultiTensorAdamWOnDevice, MatchesLibTorchAdamW) {
  auto a = parameters(device()), b = parameters(device());
  torch::optim::AdamW reference(groups(a, kOptions), kOptions);
  MultiTensorAdamW multi(groups(b, kOptions), kOptions);
  const auto expected = run(reference, a, 7), got = run(multi, b, 7);
  if (!cuda()) {
    EXPECT_TRUE(torch::equal(got, expected)) << "the CPU foreach ops are LibTorch's arithmetic";
  } else {
    EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 1e-6)) << (got - expected).abs().max().item<double>();
  }
}

TEST_P(MultiTensorAdamWOnDevice, CheckpointsInLibTorchsFormatAndResumes) {
  auto a = parameters(device()), b = parameters(device());
  MultiTensorAdamW straight(groups(a, kOptions), kOptions);
  const auto expected = run(straight, a, 6);

  MultiTensorAdamW first(groups(b, kOptions), kOptions);
  run(first, b, 3);
  std::stringstream buffer;
  {
    torch::serialize::OutputArchive archive;
    first.save(archive);
    archive.save_to(buffer);
  }
  torch::optim::AdamW plain_reader(groups(b, kOptions), kOptions);  // LibTorch reads what it wrote
  {
    torch::serialize::InputArchive archive;
    archive.load_from(buffer);
    plain_reader.load(archive);
  }
  buffer.seekg(0);
  MultiTensorAdamW second(groups(b, kOptions), kOptions);
  {
    torch::serialize::InputArchive archive;
    archive.load_from(buffer);
    second.load(archive);
  }
  const auto got = run(second, b, 3, 3);
  if (!cuda()) {
    EXPECT_TRUE(torch::equal(got, expected));
  } else {
    EXPECT_TRUE(torch::allclose(got, expected, 1e-5, 1e-6));
  }
}

TEST_P(MultiTensorAdamWOnDevice, TheFusedKernelIsUsedExactlyWhereItExists) {
  auto s = parameters(device());
  MultiTensorAdamW automatic(groups(s, kOptions), kOptions);
  EXPECT_EQ(automatic.fuses(device()), cuda() && TORCH_VERSION_MAJOR >= 2);
  MultiTensorAdamW foreach_only(groups(s, kOptions), kOptions, Kernel::foreach);
  EXPECT_FALSE(foreach_only.fuses(device()));
  MultiTensorAdamW fused(groups(s, kOptions), kOptions, Kernel::fused);
  if (cuda() && TORCH_VERSION_MAJOR >= 2) {
    EXPECT_TRUE(fused.fuses(device()));
    auto a = parameters(device()), b = parameters(device());
    MultiTensorAdamW x(groups(a, kOptions), kOptions, Kernel::fused), y(groups(b, kOptions), kOptions, Kernel::foreach);
    EXPECT_TRUE(torch::allclose(run(x, a, 5), run(y, b, 5), 1e-5, 1e-6));
  } else {
    EXPECT_THROW(fused.fuses(device()), std::invalid_argument);
  }
}

LRKIT_ON_DEVICES(MultiTensorAdamWOnDevice);

}  // namespace
}  // namespace lrkit::train
