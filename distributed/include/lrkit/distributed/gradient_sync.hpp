// The data-parallel gradient step: the local gradient's measurements the
// diagnostics need (ALGORITHMS.md section 7), the bucketed mean all-reduce
// with the norms of the mean gradient taken in the same pass, and clipping.
// Everything stays on the device as tensors; the caller reads them back to
// the host once per step.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <vector>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

struct GradientSyncOptions {
  double bucket_mb = 25.0;       // flattened all-reduce buckets, not one call per parameter
  bool dot_with_mean = true;     // g_k . g_bar while each bucket still holds the local gradient
  bool exact_pairwise = false;   // g_k / ||g_k|| rides in each bucket for the exact mean pairwise cosine
};

// 0-dim float64 tensors on the gradients' device.
struct GradientSyncResult {
  torch::Tensor local_sq;           // ||g_k||^2 before the all-reduce
  torch::Tensor mean_l2, mean_l1;   // norms of the mean gradient g_bar (l1 feeds Adam-type refinement)
  torch::Tensor dot_with_mean;      // g_k . g_bar (undefined unless requested)
  torch::Tensor normalized_sum_sq;  // ||sum_k g_k / ||g_k|| ||^2 (undefined unless requested)
};

// Replaces every parameter's gradient by the mean over ranks. With one rank
// nothing is copied or reduced; the measurements are still returned.
GradientSyncResult synchronize_gradients(const std::vector<torch::Tensor>& parameters, Collective& collective,
                                         const GradientSyncOptions& options);

// PyTorch's clip_grad_norm_ rule on the device, given the gradient's l2 norm:
// scale by min(1, clip / (l2 + 1e-6)); clip = 0 disables.
void clip_gradients(const std::vector<torch::Tensor>& parameters, const torch::Tensor& l2, double clip);

// Every tensor replaced, in place, by its mean over ranks (flattened buckets).
void average_across_ranks(const std::vector<torch::Tensor>& tensors, Collective& collective, double bucket_mb);

// HDET's converge step over replicas_per_rank x ranks replicas: replicas[r]
// lists replica r's tensors (same shapes for every r); all of them become the
// mean over every replica of every rank.
void average_replicas(const std::vector<std::vector<torch::Tensor>>& replicas, Collective& collective, double bucket_mb);

// That mean written into `into` instead (e.g. a model to evaluate), leaving the replicas alone.
void mean_of_replicas(const std::vector<std::vector<torch::Tensor>>& replicas, const std::vector<torch::Tensor>& into,
                      Collective& collective, double bucket_mb);

// Replica 0's gradients become the mean of this rank's replicas' gradients
// (before the all-reduce across ranks); the others are left alone.
void mean_gradient_into_first(const std::vector<std::vector<torch::Tensor>>& replicas);

// Every other replica's gradients become a copy of replica 0's.
void copy_gradient_from_first(const std::vector<std::vector<torch::Tensor>>& replicas);

// A count sketch S g (random bucket and sign per coordinate, drawn once from a
// seed shared by all ranks): <S x, S y> is an unbiased estimate of <x, y> with
// variance about (|x|^2 |y|^2 + <x, y>^2) / dim.
class GradientSketch {
 public:
  GradientSketch(const std::vector<torch::Tensor>& parameters, int64_t dim, uint64_t seed);
  torch::Tensor operator()(const std::vector<torch::Tensor>& parameters) const;  // [dim], float64
  int64_t dim() const { return dim_; }

 private:
  int64_t dim_;
  std::vector<torch::Tensor> buckets_, signs_;
};

}  // namespace lrkit::distributed
