#include "sample_reweighting.hpp"

namespace lrkit::train {

BatchWeights weigh_global_batch(distributed::Collective& collective, const torch::Tensor& local_losses, const ReweightConfig& c,
                                int64_t step) {
  const auto gathered = collective.all_gather(local_losses.to(torch::kDouble)).reshape({-1}).to(torch::kCPU).contiguous();
  const std::vector<double> losses(gathered.data_ptr<double>(), gathered.data_ptr<double>() + gathered.numel());
  const auto strategy = step < c.warmup ? reweight::Strategy::uniform : c.strategy.value();
  BatchWeights out;
  out.weights = reweight::sample_weights(losses, strategy, c.strength);
  out.stats = reweight::weight_stats(out.weights);
  const int64_t rows = local_losses.numel();
  const auto first = out.weights.begin() + collective.rank() * rows;
  const std::vector<double> mine(first, first + rows);
  // The gradient all-reduce averages over ranks: scale by the world size to get the sum.
  out.local = (torch::tensor(mine, torch::kDouble) * static_cast<double>(collective.world_size()))
                  .to(local_losses.device())
                  .to(torch::kFloat);
  return out;
}

}  // namespace lrkit::train
