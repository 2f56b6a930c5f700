// The ranks' shared view of an HDET ensemble (ALGORITHMS.md section 6): one
// controller per spread hyper-parameter (the learning rate first), each with
// its own permutation and bounds, all fed the same window losses. N replicas
// live on the ranks of a Collective, `replicas_per_rank` of them on each
// (replica g = rank * replicas_per_rank + r). Permutations are broadcast from
// rank 0 at every sync so the ranks cannot disagree. Parameter averaging is
// the caller's: it owns the replicas (see average_replicas).
#pragma once

#include <string>
#include <vector>

#include "lrkit/controllers/hdet.hpp"
#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

struct SpreadHyperparameter {
  std::string name;  // "lr", "weight_decay", "dropout": the run log's /hdet/<name>/ group
  controllers::HdetConfig config;  // config.replicas = ranks x replicas_per_rank
};

class HdetEnsemble {
 public:
  HdetEnsemble(std::vector<SpreadHyperparameter> spread, Collective& collective, int64_t replicas_per_rank);

  int64_t replicas() const { return replicas_; }
  int64_t replicas_per_rank() const { return per_rank_; }
  size_t size() const { return controllers_.size(); }
  const std::string& name(size_t i) const { return names_[i]; }
  const controllers::Hdet& controller(size_t i) const { return controllers_[i]; }
  const controllers::HdetState& state(size_t i) const { return states_[i]; }

  double base(size_t i, double scheduled) const { return controllers_[i].base_value(states_[i], scheduled); }
  // Replica g's value of hyper-parameter i (g is a global replica index).
  double value(size_t i, int64_t replica, double scheduled) const {
    return controllers_[i].replica_value(states_[i], replica, scheduled);
  }
  // Per replica: the mean local loss of the window so far (NaN right after a sync).
  std::vector<double> window_mean_loss() const;

  // Every replica's local loss of one step, in global replica order.
  void observe(const std::vector<double>& replica_losses);
  bool sync_due() const { return controllers_.front().sync_due(states_.front()); }
  // Whether a sync is due once `more_steps` further steps are observed (losses not yet handed over).
  bool sync_due_after(int64_t more_steps) const { return controllers_.front().sync_due_after(states_.front(), more_steps); }
  // After the parameters were averaged: each controller's meta-update from
  // the window (given its scheduled value over the window) and a fresh permutation.
  void sync(const std::vector<double>& scheduled);

  // For checkpoints: every controller's state, in order; restore checks the shapes.
  const std::vector<controllers::HdetState>& states() const { return states_; }
  void restore(const std::vector<controllers::HdetState>& states);

 private:
  void agree_on_permutations();
  std::vector<std::string> names_;
  std::vector<controllers::Hdet> controllers_;
  std::vector<controllers::HdetState> states_;
  Collective& collective_;
  int64_t per_rank_, replicas_;
};

}  // namespace lrkit::distributed
