#include "lrkit/train/gpt.hpp"

#include <torch/version.h>

#include <cmath>
#include <stdexcept>

#include "lrkit/train/add_layer_norm.hpp"

namespace lrkit::train {

namespace F = torch::nn::functional;

namespace {

// at::linear, not torch::nn::Linear::forward: the C++ frontend's forward multiplies and then adds the bias in a
// second pass for [B, T, C] inputs; at::linear folds them into one addmm that adds the bias in the GEMM (its
// epilogue on CUDA), as PyTorch's nn.Linear does: one elementwise pass over every layer output less.
torch::Tensor linear(const torch::nn::Linear& layer, const torch::Tensor& x) {
  return torch::linear(x, layer->weight, layer->bias);
}

}  // namespace

bool fused_attention(const GptConfig& c) {
  return c.attention == Attention::fused || (c.attention == Attention::auto_ && TORCH_VERSION_MAJOR >= 2);
}

bool fused_norm(const GptConfig& c) {
  if (c.fused_norm == FusedNorm::on && !add_layer_norm_kernel_built())
    throw std::invalid_argument("model.fused_norm=on: this build has no lrkit CUDA kernels (they need LibTorch with CUDA "
                                "and a CUDA compiler when CMake configures; see the configure line 'lrkit: CUDA kernels')");
  return c.fused_norm == FusedNorm::on || (c.fused_norm == FusedNorm::auto_ && add_layer_norm_kernel_built());
}

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const GptConfig& c) : heads_(c.heads), fused_(fused_attention(c)) {
  qkv_ = register_module("qkv", torch::nn::Linear(c.width, 3 * c.width));
  proj_ = register_module("proj", torch::nn::Linear(c.width, c.width));
  attn_dropout_ = register_module("attn_dropout", torch::nn::Dropout(c.dropout));
  out_dropout_ = register_module("out_dropout", torch::nn::Dropout(c.dropout));
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  const int64_t batch = x.size(0), time = x.size(1), width = x.size(2), head_width = width / heads_;
  auto parts = linear(qkv_, x).split(width, 2);
  auto shape = [&](const torch::Tensor& t) { return t.view({batch, time, heads_, head_width}).transpose(1, 2); };
  const auto q = shape(parts[0]), k = shape(parts[1]), v = shape(parts[2]);
  const auto y = (fused_ ? fused(q, k, v) : explicit_scores(q, k, v)).transpose(1, 2).contiguous().view({batch, time, width});
  return out_dropout_->forward(linear(proj_, y));
}

torch::Tensor CausalSelfAttentionImpl::explicit_scores(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const int64_t time = q.size(2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(static_cast<double>(q.size(3)));
  // Built for this call's length, not kept: a [context, context] mask per layer held context^2 bytes each in
  // memory and in every checkpoint (800 MB over 12 layers at context 8192), where a call's scores need T^2 floats
  // per batch row and head anyway.
  const auto future = torch::ones({time, time}, q.options().dtype(torch::kBool)).triu(1);
  scores = scores.masked_fill(future, -std::numeric_limits<float>::infinity());
  return torch::matmul(attn_dropout_->forward(torch::softmax(scores, -1)), v);
}

torch::Tensor CausalSelfAttentionImpl::fused(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v) {
  const double dropout = is_training() ? attn_dropout_->options.p() : 0.0;
#if TORCH_VERSION_MAJOR >= 2
  return at::scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, dropout, /*is_causal=*/true);
#else
  return std::get<0>(at::_scaled_dot_product_attention(q, k, v, /*attn_mask=*/{}, dropout, /*need_attn_weights=*/false,
                                                       /*is_causal=*/true));
#endif
}

BlockImpl::BlockImpl(const GptConfig& c) : fused_norm_(fused_norm(c)) {
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.width})));
  attn_ = register_module("attn", CausalSelfAttention(c));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.width})));
  fc_ = register_module("fc", torch::nn::Linear(c.width, 4 * c.width));
  fc_proj_ = register_module("fc_proj", torch::nn::Linear(4 * c.width, c.width));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
}

NormedStream BlockImpl::forward(const NormedStream& in, torch::nn::LayerNorm& next_norm) {
  const auto mid = add_layer_norm(in.h, attn_->forward(in.normed), ln2_, fused_norm_);
  const auto mlp = dropout_->forward(linear(fc_proj_, F::gelu(linear(fc_, mid.normed))));
  return add_layer_norm(mid.h, mlp, next_norm, fused_norm_);
}

GptImpl::GptImpl(const GptConfig& c) : config_(c) {
  config_.validate();
  token_embedding_ = register_module("token_embedding", torch::nn::Embedding(c.vocab, c.width));
  position_embedding_ = register_module("position_embedding", torch::nn::Embedding(c.context, c.width));
  dropout_ = register_module("dropout", torch::nn::Dropout(c.dropout));
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.layers; ++i) blocks_->push_back(Block(c));
  ln_final_ = register_module("ln_final", torch::nn::LayerNorm(torch::nn::LayerNormOptions({c.width})));

  // GPT-2 initialization; residual projections scaled by 1/sqrt(2 layers).
  torch::NoGradGuard no_grad;
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.layers));
  for (auto& item : named_parameters()) {
    const std::string& name = item.key();
    auto& p = item.value();
    if (name.find("ln") != std::string::npos) continue;  // LayerNorm keeps weight 1, bias 0
    if (name.size() >= 4 && name.compare(name.size() - 4, 4, "bias") == 0) {
      p.zero_();
    } else if (name.find("proj.weight") != std::string::npos) {
      p.normal_(0.0, residual_std);
    } else {
      p.normal_(0.0, 0.02);
    }
  }
}

torch::Tensor GptImpl::forward(const torch::Tensor& tokens) {
  const int64_t time = tokens.size(1);
  TORCH_CHECK(time <= config_.context, "sequence length ", time, " exceeds the model context ", config_.context);
  const auto positions = torch::arange(time, tokens.options().dtype(torch::kLong));
  const auto x = dropout_->forward(token_embedding_->forward(tokens) + position_embedding_->forward(positions));
  const auto block = [&](size_t i) { return blocks_->ptr<BlockImpl>(i); };
  NormedStream stream{x, block(0)->ln1()->forward(x)};
  for (size_t i = 0; i < blocks_->size(); ++i)
    stream = block(i)->forward(stream, i + 1 < blocks_->size() ? block(i + 1)->ln1() : ln_final_);
  // Tied output embedding: logits = ln_final(h) W_e^T.
  return torch::matmul(stream.normed, token_embedding_->weight.t());
}

torch::Tensor GptImpl::per_sequence_loss(const torch::Tensor& tokens, const torch::Tensor& targets) {
  const auto logits = forward(tokens);
  const auto losses = F::cross_entropy(logits.reshape({-1, logits.size(-1)}).to(torch::kFloat), targets.reshape({-1}),
                                       F::CrossEntropyFuncOptions().reduction(torch::kNone));
  return losses.view({tokens.size(0), tokens.size(1)}).mean(1);
}

void GptImpl::set_dropout(double p) {
  if (!(p >= 0.0 && p < 1.0)) throw std::invalid_argument("dropout must be in [0, 1) (got " + std::to_string(p) + ")");
  for (const auto& module : modules(/*include_self=*/false))
    if (auto* dropout = module->as<torch::nn::Dropout>()) dropout->options.p(p);
  config_.dropout = p;
}

std::vector<torch::Tensor> GptImpl::decayed_parameters() {
  std::vector<torch::Tensor> out;
  for (auto& item : named_parameters())
    if (item.value().dim() == 2 && item.key().find("embedding") == std::string::npos) out.push_back(item.value());
  return out;
}

std::vector<torch::Tensor> GptImpl::undecayed_parameters() {
  std::vector<torch::Tensor> out;
  for (auto& item : named_parameters())
    if (!(item.value().dim() == 2 && item.key().find("embedding") == std::string::npos)) out.push_back(item.value());
  return out;
}

}  // namespace lrkit::train
