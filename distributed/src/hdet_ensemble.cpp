#include "lrkit/distributed/hdet_ensemble.hpp"

#include <limits>
#include <stdexcept>

namespace lrkit::distributed {

HdetEnsemble::HdetEnsemble(std::vector<SpreadHyperparameter> spread, Collective& collective, int64_t replicas_per_rank)
    : collective_(collective), per_rank_(replicas_per_rank), replicas_(collective.world_size() * replicas_per_rank) {
  if (spread.empty()) throw std::invalid_argument("hdet: nothing to spread");
  if (replicas_per_rank < 1)
    throw std::invalid_argument("hdet.replicas_per_rank must be >= 1 (got " + std::to_string(replicas_per_rank) + ")");
  for (auto& s : spread) {
    if (s.config.replicas != replicas_)
      throw std::invalid_argument("hdet '" + s.name + "': configured for " + std::to_string(s.config.replicas) +
                                  " replicas, but " + std::to_string(collective.world_size()) + " rank(s) x " +
                                  std::to_string(replicas_per_rank) + " make " + std::to_string(replicas_));
    if (s.config.sync_every != spread.front().config.sync_every)
      throw std::invalid_argument("hdet: every spread hyper-parameter must share sync_every");
    names_.push_back(s.name);
    controllers_.emplace_back(s.config);
    states_.push_back(controllers_.back().init());
  }
  agree_on_permutations();
}

// Permutations are a pure function of (seed, sync index), so ranks configured
// alike agree; rank 0's are broadcast anyway so a mismatch cannot split them.
void HdetEnsemble::agree_on_permutations() {
  if (collective_.world_size() == 1) return;
  std::vector<int64_t> all;
  for (const auto& s : states_) all.insert(all.end(), s.permutation.begin(), s.permutation.end());
  auto tensor = torch::tensor(all, torch::kLong).to(collective_.device());
  collective_.broadcast(tensor, 0);
  tensor = tensor.to(torch::kCPU);
  const int64_t* p = tensor.data_ptr<int64_t>();
  for (auto& s : states_) {
    s.permutation.assign(p, p + replicas_);
    p += replicas_;
  }
}

std::vector<double> HdetEnsemble::window_mean_loss() const {
  const auto& s = states_.front();
  std::vector<double> out(s.window_loss.size(), std::numeric_limits<double>::quiet_NaN());
  if (s.window_steps == 0) return out;
  for (size_t r = 0; r < out.size(); ++r) out[r] = s.window_loss[r] / static_cast<double>(s.window_steps);
  return out;
}

void HdetEnsemble::observe(const std::vector<double>& replica_losses) {
  for (size_t i = 0; i < controllers_.size(); ++i) states_[i] = controllers_[i].observe(states_[i], replica_losses);
}

void HdetEnsemble::sync(const std::vector<double>& scheduled) {
  if (scheduled.size() != controllers_.size())
    throw std::invalid_argument("hdet sync: " + std::to_string(scheduled.size()) + " scheduled values for " +
                                std::to_string(controllers_.size()) + " controllers");
  for (size_t i = 0; i < controllers_.size(); ++i) states_[i] = controllers_[i].sync(states_[i], scheduled[i]);
  agree_on_permutations();
}

void HdetEnsemble::restore(const std::vector<controllers::HdetState>& states) {
  if (states.size() != controllers_.size())
    throw std::invalid_argument("hdet: the checkpoint holds " + std::to_string(states.size()) +
                                " controller state(s), the config spreads " + std::to_string(controllers_.size()));
  for (const auto& s : states)
    if (static_cast<int64_t>(s.permutation.size()) != replicas_ || static_cast<int64_t>(s.window_loss.size()) != replicas_)
      throw std::invalid_argument("hdet: the checkpoint was written for " + std::to_string(s.permutation.size()) +
                                  " replicas, this run has " + std::to_string(replicas_));
  for (size_t i = 0; i < states.size(); ++i) controllers_[i].check_state(states[i]);
  states_ = states;
}

}  // namespace lrkit::distributed
