// A decoder-only GPT over bytes (nanoGPT's architecture: pre-norm blocks,
// causal self-attention, GELU MLP, tied input/output embeddings).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <string>
#include <vector>

#include "lrkit/train/gpt_config.hpp"

namespace lrkit::train {

// Whether `config` computes attention with the fused kernel (model.attention, auto resolved).
bool fused_attention(const GptConfig& config);
// Whether `config` fuses each residual add with the LayerNorm after it on CUDA (model.fused_norm, auto resolved);
// throws std::invalid_argument for on in a build without lrkit's CUDA kernel.
bool fused_norm(const GptConfig& config);

// The residual stream between sub-blocks: h and the LayerNorm of h that the next sub-block reads.
struct NormedStream {
  torch::Tensor h;
  torch::Tensor normed;
};

class CausalSelfAttentionImpl : public torch::nn::Module {
 public:
  explicit CausalSelfAttentionImpl(const GptConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

 private:
  // q, k, v: [batch, heads, T, head width] -> [batch, heads, T, head width]
  torch::Tensor explicit_scores(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);
  torch::Tensor fused(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v);

  int64_t heads_;
  bool fused_;
  torch::nn::Linear qkv_{nullptr}, proj_{nullptr};
  torch::nn::Dropout attn_dropout_{nullptr}, out_dropout_{nullptr};
};
TORCH_MODULE(CausalSelfAttention);

// A pre-norm block, h -> h + attn(ln1(h)) -> ... + mlp(ln2(...)). It takes the stream with ln1(h) already
// applied and hands on the next LayerNorm's output (the next block's ln1 or the final one), so that each
// residual add is fused with the LayerNorm after it.
class BlockImpl : public torch::nn::Module {
 public:
  explicit BlockImpl(const GptConfig& config);
  NormedStream forward(const NormedStream& in, torch::nn::LayerNorm& next_norm);
  torch::nn::LayerNorm& ln1() { return ln1_; }

 private:
  bool fused_norm_;
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  CausalSelfAttention attn_{nullptr};
  torch::nn::Linear fc_{nullptr}, fc_proj_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
};
TORCH_MODULE(Block);

class GptImpl : public torch::nn::Module {
 public:
  explicit GptImpl(const GptConfig& config);

  // tokens [batch, time] (int64) -> logits [batch, time, vocab]
  torch::Tensor forward(const torch::Tensor& tokens);
  // Mean next-token cross-entropy of each sequence: [batch].
  torch::Tensor per_sequence_loss(const torch::Tensor& tokens, const torch::Tensor& targets);

  // Parameters that get weight decay (matrices of linear layers) and those
  // that do not (biases, norms, embeddings); together: every parameter once.
  std::vector<torch::Tensor> decayed_parameters();
  std::vector<torch::Tensor> undecayed_parameters();
  const GptConfig& config() const { return config_; }
  // Every dropout layer's probability (HDET spreads it across replicas); the architecture is unchanged.
  void set_dropout(double p);

 private:
  GptConfig config_;
  torch::nn::Embedding token_embedding_{nullptr}, position_embedding_{nullptr};
  torch::nn::Dropout dropout_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  torch::nn::LayerNorm ln_final_{nullptr};
};
TORCH_MODULE(Gpt);

}  // namespace lrkit::train
