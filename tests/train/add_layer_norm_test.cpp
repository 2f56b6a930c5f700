// add_layer_norm (the GPT's residual add + LayerNorm): its values and every
// gradient against the composite ops in float64, over row widths that are and
// are not multiples of a warp and wider than one, a float32 and a bfloat16
// branch, and h read on or not. On CUDA this is lrkit's fused kernel; on the
// CPU the composite path. The fused backward sums gamma's and beta's gradients
// in a fixed order: two runs agree bit for bit.
#include "lrkit/train/add_layer_norm.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "device_param.hpp"
#include "tensor_error.hpp"

namespace lrkit::train {
namespace {

using lrkit::testing::relative_error;

struct Case {
  std::vector<int64_t> shape;
  torch::ScalarType branch_type;
  bool h_read_on;  // h feeds the next residual add (its gradient comes in) or not (the last norm)
};

const std::vector<Case> kCases = {
    {{1, 37}, torch::kFloat, true},          {{300, 200}, torch::kFloat, false},
    {{2, 3, 768}, torch::kFloat, true},      {{4, 1030}, torch::kFloat, true},
    {{300, 200}, torch::kBFloat16, true},    {{2, 3, 768}, torch::kBFloat16, false},
};

struct Run {
  torch::Tensor h, normed, grad_x, grad_branch, grad_gamma, grad_beta;
};

// One forward and backward of loss = sum(normed * gn) (+ sum(h * gh)): the reference in float64 on the CPU
// (composite), or add_layer_norm's with the case's types on `device`.
Run run(const Case& c, const torch::Device& device, bool reference) {
  torch::manual_seed(3);
  const int64_t cols = c.shape.back();
  const auto x0 = torch::randn(c.shape) * 2 + 0.5, branch0 = torch::randn(c.shape).to(c.branch_type);
  const auto gamma0 = torch::randn({cols}) * 0.3 + 1, beta0 = torch::randn({cols}) * 0.2;
  const auto gn = torch::randn(c.shape, torch::kDouble), gh = torch::randn(c.shape, torch::kDouble);
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({cols}));
  const auto on = [&](const torch::Tensor& t) {
    return (reference ? t.to(torch::kDouble) : t.to(device)).detach().requires_grad_(true);
  };
  norm->weight = on(gamma0);
  norm->bias = on(beta0);
  const auto x = on(x0), branch = on(branch0);
  const auto out = add_layer_norm(x, branch, norm, /*fused=*/true);
  auto loss = (out.normed.to(torch::kDouble) * gn.to(out.normed.device())).sum();
  if (c.h_read_on) loss = loss + (out.h.to(torch::kDouble) * gh.to(out.h.device())).sum();
  loss.backward();
  return {out.h, out.normed, x.grad(), branch.grad(), norm->weight.grad(), norm->bias.grad()};
}

class AddLayerNormOnDevice : public lrkit::testing::OnDevice {
 protected:
  void SetUp() override {
    OnDevice::SetUp();
    if (IsSkipped()) return;
    if (cuda() && !add_layer_norm_kernel_built())
      GTEST_SKIP() << "this build has no lrkit CUDA kernels (LRKIT_CUDA_KERNELS): nothing fused to test";
  }
};

TEST_P(AddLayerNormOnDevice, MatchesTheCompositeOpsInDoublePrecision) {
  for (const auto& c : kCases) {
    const auto got = run(c, device(), false), want = run(c, torch::kCPU, true);
    const bool bf16 = c.branch_type == torch::kBFloat16;
    // float32 sums in another order; a bfloat16 normed (and its incoming gradient) is rounded to 8 bits.
    const double tolerance = bf16 ? 2e-2 : 1e-5;
    const std::string what = "shape " + c10::str(c.shape) + (bf16 ? " bf16" : " f32") + (c.h_read_on ? ", h read on" : "");
    EXPECT_LT(relative_error(got.h, want.h), 1e-6) << what;
    EXPECT_LT(relative_error(got.normed, want.normed), tolerance) << what;
    EXPECT_LT(relative_error(got.grad_x, want.grad_x), bf16 ? tolerance : 1e-4) << what;
    EXPECT_LT(relative_error(got.grad_branch, want.grad_branch), bf16 ? tolerance : 1e-4) << what;
    EXPECT_LT(relative_error(got.grad_gamma, want.grad_gamma), bf16 ? tolerance : 1e-4) << what;
    EXPECT_LT(relative_error(got.grad_beta, want.grad_beta), bf16 ? tolerance : 1e-4) << what;
    EXPECT_EQ(got.h.scalar_type(), torch::kFloat) << what;
    EXPECT_EQ(got.grad_branch.scalar_type(), c.branch_type) << what;
    // Fused, normed is in the branch's type (bfloat16 under autocast); the composite gives layer_norm's float32.
    EXPECT_EQ(got.normed.scalar_type(), cuda() ? c.branch_type : torch::kFloat) << what;
  }
}

TEST_P(AddLayerNormOnDevice, GradientsAreTheSameOnEveryRun) {
  const Case c{{1000, 384}, torch::kFloat, true};
  const auto first = run(c, device(), false), second = run(c, device(), false);
  EXPECT_TRUE(torch::equal(first.grad_gamma, second.grad_gamma));
  EXPECT_TRUE(torch::equal(first.grad_beta, second.grad_beta));
  EXPECT_TRUE(torch::equal(first.grad_x, second.grad_x));
}

LRKIT_ON_DEVICES(AddLayerNormOnDevice);

}  // namespace
}  // namespace lrkit::train
