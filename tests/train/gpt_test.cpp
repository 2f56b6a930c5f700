// The reference GPT: nanoGPT's forward written out from the parameters by
// name gives its logits and gradients, with the residual adds and LayerNorms
// fused or composite; under bf16 autocast the fused stream follows the
// composite one; the two attention forms (the fused kernel and the explicit
// masked scores) agree and hold the same parameters and buffers. Each on the
// CPU and on CUDA (float rounding apart).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <map>

#include "device_param.hpp"
#include "tensor_error.hpp"
#include "lrkit/train/add_layer_norm.hpp"
#include "lrkit/train/autocast_scope.hpp"
#include "lrkit/train/gpt.hpp"

namespace lrkit::train {
namespace {

using lrkit::testing::relative_error;

GptConfig shape(Attention attention) {
  GptConfig c{256, 32, 2, 4, 32, 0.0};
  c.attention = attention;
  return c;
}

struct Pass {
  torch::Tensor logits, gradient;
};

// loss = mean(logits^2): the logits and every parameter's gradient, flattened, on the CPU.
Pass gradient_of(Gpt& model, const torch::Tensor& logits) {
  model->zero_grad();
  logits.to(torch::kFloat).pow(2).mean().backward();
  std::vector<torch::Tensor> grads;
  for (const auto& p : model->parameters()) grads.push_back(p.grad().reshape({-1}));
  return {logits.detach().to(torch::kCPU).to(torch::kFloat), torch::cat(grads).to(torch::kCPU)};
}

Pass forward_backward(const GptConfig& config, const torch::Tensor& tokens, const torch::Device& device) {
  torch::manual_seed(11);  // the same initial weights for either form
  Gpt model(config);
  model->to(device);
  return gradient_of(model, model->forward(tokens.to(device)));
}

class GptOnDevice : public lrkit::testing::OnDevice {};

// nanoGPT's forward, from the model's parameters by name (explicit attention, composite norms).
torch::Tensor nanogpt_logits(Gpt& model, const torch::Tensor& tokens) {
  std::map<std::string, torch::Tensor> p;
  for (const auto& item : model->named_parameters()) p[item.key()] = item.value();
  const auto& c = model->config();
  const int64_t batch = tokens.size(0), time = tokens.size(1), width = c.width, heads = c.heads;
  const auto norm = [&](const torch::Tensor& x, const std::string& name) {
    return torch::layer_norm(x, {width}, p[name + ".weight"], p[name + ".bias"]);
  };
  const auto linear = [&](const torch::Tensor& x, const std::string& name) {
    return torch::linear(x, p[name + ".weight"], p[name + ".bias"]);
  };
  const auto split_heads = [&](const torch::Tensor& t) { return t.view({batch, time, heads, width / heads}).transpose(1, 2); };
  const auto future = torch::ones({time, time}, tokens.options().dtype(torch::kBool)).tril().logical_not();
  auto x = p["token_embedding.weight"].index_select(0, tokens.reshape({-1})).view({batch, time, width}) +
           p["position_embedding.weight"].narrow(0, 0, time);
  for (int64_t layer = 0; layer < c.layers; ++layer) {
    const std::string b = "blocks." + std::to_string(layer);
    const auto qkv = linear(norm(x, b + ".ln1"), b + ".attn.qkv").split(width, 2);
    auto scores = torch::matmul(split_heads(qkv[0]), split_heads(qkv[1]).transpose(-2, -1)) /
                  std::sqrt(static_cast<double>(width / heads));
    scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
    const auto y = torch::matmul(torch::softmax(scores, -1), split_heads(qkv[2])).transpose(1, 2).reshape({batch, time, width});
    x = x + linear(y, b + ".attn.proj");
    x = x + linear(torch::gelu(linear(norm(x, b + ".ln2"), b + ".fc")), b + ".fc_proj");
  }
  return torch::matmul(norm(x, "ln_final"), p["token_embedding.weight"].t());
}

TEST_P(GptOnDevice, StreamFusedOrNotIsNanoGptWrittenOut) {
  torch::manual_seed(5);
  const auto tokens = torch::randint(0, 256, {3, 32}, torch::kLong).to(device());
  for (const FusedNorm fused : {FusedNorm::off, FusedNorm::auto_}) {  // auto: lrkit's kernel on CUDA where built
    GptConfig c = shape(Attention::explicit_);
    c.layers = 3;
    c.fused_norm = fused;
    torch::manual_seed(11);
    Gpt model(c);
    model->to(device());
    const auto got = gradient_of(model, model->forward(tokens));
    const auto want = gradient_of(model, nanogpt_logits(model, tokens));
    const double tolerance = cuda() ? 1e-4 : 1e-5;
    const std::string what = "model.fused_norm=" + c.fused_norm.text();
    EXPECT_LT(relative_error(got.logits, want.logits), tolerance) << what;
    EXPECT_LT(relative_error(got.gradient, want.gradient), tolerance) << what;
  }
}

TEST_P(GptOnDevice, FusedStreamUnderBf16AutocastFollowsTheComposite) {
  GptConfig c = shape(Attention::auto_);
  c.fused_norm = FusedNorm::on;
  if (!add_layer_norm_kernel_built()) {
    EXPECT_THROW(fused_norm(c), std::invalid_argument) << "on in a build without the kernel is refused";
    if (cuda()) GTEST_SKIP() << "this build has no lrkit CUDA kernels (LRKIT_CUDA_KERNELS)";
    return;
  }
  if (!cuda()) GTEST_SKIP() << "the fused kernel is CUDA's; the CPU runs the composite (StreamFusedOrNot...)";
  torch::manual_seed(5);
  const auto tokens = torch::randint(0, 256, {4, 32}, torch::kLong).to(device());
  std::map<std::string, Pass> passes;
  for (const FusedNorm fused : {FusedNorm::off, FusedNorm::on}) {
    c.fused_norm = fused;
    torch::manual_seed(11);
    Gpt model(c);
    model->to(device());
    torch::Tensor logits;
    {
      const AutocastScope autocast(device(), true);
      logits = model->forward(tokens);
    }
    passes[c.fused_norm.text()] = gradient_of(model, logits);
  }
  // bf16 rounding apart: the LayerNorm outputs are rounded once either way, from float32 sums in another order.
  EXPECT_LT(relative_error(passes["on"].logits, passes["off"].logits), 2e-2);
  EXPECT_LT(relative_error(passes["on"].gradient, passes["off"].gradient), 5e-2);
}

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
