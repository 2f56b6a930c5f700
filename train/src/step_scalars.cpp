#include "step_scalars.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace lrkit::train {

StepScalars gather_step_scalars(distributed::Collective& collective, const torch::Tensor& replica_losses,
                                const distributed::GradientSyncResult& sync, const torch::Tensor& sketch, int stop_signal) {
  RECORD_USER_SCOPE("lrkit.step_scalars");  // where the host waits for the device
  const auto device = replica_losses.device();
  const auto nan = torch::full({1}, std::numeric_limits<double>::quiet_NaN(), torch::TensorOptions().dtype(torch::kDouble).device(device));
  const auto defined_or_nan = [&](const torch::Tensor& t) { return t.defined() ? t.reshape({1}) : nan; };
  const int64_t replicas = replica_losses.numel();
  const auto signal = torch::full({1}, static_cast<double>(stop_signal), nan.options());
  std::vector<torch::Tensor> mine = {sync.local_sq.reshape({1}), defined_or_nan(sync.dot_with_mean), signal, replica_losses};
  if (sketch.defined()) mine.push_back(sketch);
  const auto gathered = collective.all_gather(torch::cat(mine));  // [world, 3 + replicas (+ sketch dim)]
  const auto host = torch::cat({gathered.reshape({-1}), defined_or_nan(sync.mean_l2), defined_or_nan(sync.mean_l1),
                                defined_or_nan(sync.normalized_sum_sq)})
                        .to(torch::kCPU);
  const double* v = host.data_ptr<double>();
  const int64_t world = gathered.size(0), width = gathered.size(1);
  StepScalars out;
  for (int64_t r = 0; r < world; ++r) {
    const double* row = v + r * width;
    out.ranks.grad_norm.push_back(std::sqrt(row[0]));
    if (sync.dot_with_mean.defined()) out.ranks.dot_with_mean.push_back(row[1]);
    out.stop_signal = std::max(out.stop_signal, static_cast<int>(row[2]));
    const double* losses = row + 3;
    double rank_loss = 0.0;
    for (int64_t k = 0; k < replicas; ++k) rank_loss += losses[k];
    out.ranks.loss.push_back(rank_loss / static_cast<double>(replicas));
    out.replica_loss.insert(out.replica_loss.end(), losses, losses + replicas);
    out.sketches.insert(out.sketches.end(), losses + replicas, row + width);
  }
  out.ranks.mean_grad_norm = v[world * width];
  out.grad_norm_l1 = v[world * width + 1];
  out.ranks.normalized_sum_sq = v[world * width + 2];
  out.loss = std::accumulate(out.ranks.loss.begin(), out.ranks.loss.end(), 0.0) / static_cast<double>(world);
  return out;
}

distributed::GradientSyncResult local_gradients(std::vector<Replica>& replicas, distributed::Collective& solo, double clip) {
  const distributed::GradientSyncOptions measure_only{1.0, false, false};
  std::vector<torch::Tensor> squares;
  for (auto& r : replicas) {
    const auto own = distributed::synchronize_gradients(r.parameters, solo, measure_only);
    distributed::clip_gradients(r.parameters, own.mean_l2, clip);
    squares.push_back(own.local_sq);
  }
  distributed::GradientSyncResult result;
  result.local_sq = torch::stack(squares).mean();
  return result;
}

void use_rms_gradient_norm(StepScalars& scalars) {
  double sum_sq = 0.0;
  for (double n : scalars.ranks.grad_norm) sum_sq += n * n;
  scalars.ranks.mean_grad_norm = std::sqrt(sum_sq / static_cast<double>(scalars.ranks.grad_norm.size()));
}

}  // namespace lrkit::train
