#include "lrkit/train/hdet_scheduler.hpp"

#include "lrkit/train/gradient_sync.hpp"
#include "lrkit/train/learning_rate.hpp"

namespace lrkit::train {

namespace {
constexpr double kBucketMb = 25.0;  // parameter averaging, flattened like the gradient all-reduce
}  // namespace

HdetScheduler::HdetScheduler(const controllers::HdetConfig& config, schedules::Schedule base,
                             torch::optim::Optimizer& optimizer, std::vector<torch::Tensor> parameters,
                             Collective& collective)
    : hdet_(config), base_(std::move(base)), optimizer_(optimizer), parameters_(std::move(parameters)),
      collective_(collective), state_(hdet_.init()) {
  if (config.replicas != collective.world_size())
    throw std::invalid_argument("hdet.replicas (" + std::to_string(config.replicas) + ") must equal the number of ranks (" +
                                std::to_string(collective.world_size()) + ") for the drop-in scheduler");
  agree_on_permutation();
  apply();
}

// Permutations are a pure function of (seed, sync index), so ranks agree when
// configured alike; rank 0's is broadcast anyway so a mismatch cannot split them.
void HdetScheduler::agree_on_permutation() {
  auto permutation = torch::tensor(state_.permutation, torch::kLong);
  collective_.broadcast(permutation, 0);
  state_.permutation.assign(permutation.data_ptr<int64_t>(), permutation.data_ptr<int64_t>() + permutation.numel());
}

void HdetScheduler::step(double local_loss) {
  const auto losses = collective_.all_gather(torch::tensor({local_loss}, torch::kDouble)).reshape({-1}).contiguous();
  state_ = hdet_.observe(state_, std::vector<double>(losses.data_ptr<double>(), losses.data_ptr<double>() + losses.numel()));
  if (hdet_.sync_due(state_)) {
    // Converge: every replica's parameters become their mean. Optimizer state is not averaged.
    average_across_ranks(parameters_, collective_, kBucketMb);
    state_ = hdet_.sync(state_, base_(state_.step));
    agree_on_permutation();
  }
  apply();
}

double HdetScheduler::base_lr() const { return hdet_.base_lr(state_, base_(state_.step)); }

double HdetScheduler::lr() const { return hdet_.replica_lr(state_, collective_.rank(), base_(state_.step)); }

void HdetScheduler::restore(const controllers::HdetState& state) {
  state_ = state;
  apply();
}

void HdetScheduler::apply() { set_learning_rate(optimizer_, lr()); }

}  // namespace lrkit::train
