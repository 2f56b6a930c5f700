// Loss-based sample reweighting over the global batch (ALGORITHMS.md section
// 8) for the trainer: one all-gather of every rank's per-sample losses (no
// gradient through them), the weights of the whole batch on the host, and
// this rank's slice back on the device. Any split of the batch over ranks and
// micro-batches sees the same batch, hence the same weights.
#pragma once

#include <torch/torch.h>

#include <vector>

#include "lrkit/reweight/sample_weights.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct BatchWeights {
  torch::Tensor local;           // this rank's rows' weights, scaled so that the mean of the ranks' gradients
                                 // of sum(local * losses) is the gradient of sum_i w_i l_i over the global batch
  reweight::WeightStats stats;   // of the global weights
  std::vector<double> weights;   // the global weights (rank-major), for the histogram
};

// `local_losses`: [rows] per-sample mean token losses of this rank, detached.
// Before reweight.warmup steps the weights are uniform.
BatchWeights weigh_global_batch(distributed::Collective& collective, const torch::Tensor& local_losses, const ReweightConfig& config,
                                int64_t step);

}  // namespace lrkit::train
