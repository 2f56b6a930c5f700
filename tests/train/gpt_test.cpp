// The reference GPT's two attention forms: the fused kernel and the explicit
// masked scores give the same logits and gradients (float rounding apart), on
// the CPU and on CUDA, and hold the same parameters and buffers.
#include <gtest/gtest.h>

#include "device_param.hpp"
#include "lrkit/train/gpt.hpp"

namespace lrkit::train {
namespace {

GptConfig shape(Attention attention) {
  GptConfig c{256, 32, 2, 4, 32, 0.0};
  c.attention = attention;
  return c;
}

struct Pass {
  torch::Tensor logits, gradient;
};

Pass forward_backward(const GptConfig& config, const torch::Tensor& tokens, const torch::Device& device) {
  torch::manual_seed(11);  // the same initial weights for either form
  Gpt model(config);
  model->to(device);
  const auto logits = model->forward(tokens.to(device));
  logits.to(torch::kFloat).pow(2).mean().backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().reshape({-1}));
  return {logits.detach().to(torch::kCPU), torch::cat(grads).to(torch::kCPU)};
}

class GptOnDevice : public lrkit::testing::OnDevice {};

TEST_P(GptOnDevice, FusedAndExplicitAttentionAgree) {
  torch::manual_seed(5);
  const auto tokens = torch::randint(0, 256, {3, 32}, torch::kLong);
  for (const int64_t time : {32, 17}) {  // the full context and a shorter sequence (the causal mask's corner)
    const auto t = tokens.narrow(1, 0, time);
    const auto fused = forward_backward(shape(Attention::fused), t, device());
    const auto explicit_form = forward_backward(shape(Attention::explicit_), t, device());
    // fp32 on both; CUDA's fused kernels accumulate in another order (and may use TF32-free tensor cores).
    const double tolerance = cuda() ? 1e-4 : 1e-5;
    EXPECT_TRUE(torch::allclose(fused.logits, explicit_form.logits, tolerance, tolerance))
        << "T=" << time << " max difference " << (fused.logits - explicit_form.logits).abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(fused.gradient, explicit_form.gradient, tolerance, tolerance))
        << "T=" << time << " max difference " << (fused.gradient - explicit_form.gradient).abs().max().item<double>();
  }
}

TEST(Gpt, BothFormsHoldTheSameStateSoCheckpointsLoadEitherWay) {
  Gpt fused(shape(Attention::fused)), explicit_form(shape(Attention::explicit_));
  const auto a = fused->named_parameters(), b = explicit_form->named_parameters();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].key(), b[i].key());
  EXPECT_EQ(fused->named_buffers().size(), explicit_form->named_buffers().size());
  EXPECT_EQ(fused_attention(shape(Attention::auto_)), TORCH_VERSION_MAJOR >= 2) << "auto: fused from LibTorch 2 on";
  EXPECT_TRUE(fused_attention(shape(Attention::fused)));
  EXPECT_FALSE(fused_attention(shape(Attention::explicit_)));
}

LRKIT_ON_DEVICES(GptOnDevice);

}  // namespace
}  // namespace lrkit::train
