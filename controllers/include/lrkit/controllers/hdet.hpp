// HDET, hyperparameter-divergent ensemble training (ALGORITHMS.md section 6,
// arXiv 2604.24708): N replicas step with spread values of one scalar
// hyper-parameter (the learning rate; also weight decay or dropout) around a
// base value, are averaged every T_sync steps, and an auto-LR meta-update
// moves the base toward the replicas whose window loss was lowest. Pure C++:
// a Config, an explicit State, and pure functions from one State to the next.
// lrkit applies the correction multiplicatively on top of any base schedule
// (the schedule's shape is kept); `paper_mode` moves the absolute base value
// additively as the reference does. One Hdet per spread hyper-parameter, each
// with its own seed (permutation) and bounds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lrkit::controllers {

struct HdetConfig {
  int64_t replicas = 4;          // N: ranks x replicas per rank
  double alpha = 1.0 / 9.0;      // spread half-width: multipliers evenly in [1 - alpha, 1 + alpha]
  int64_t sync_every = 100;      // T_sync: steps between parameter averages (and meta-updates)
  bool auto_lr = true;
  int64_t warmup_steps = 0;      // S_warm: no meta-update before this step (the spread applies from step 0)
  double sigma = 0.1;            // softmax temperature over window losses
  double beta = 0.9;             // momentum of the meta-update
  double meta_lr = 0.5;          // lambda
  double min_scale = 0.05, max_scale = 20.0;  // bounds of the multiplicative correction
  double lower = 0.0, upper = 1e300;  // every replica's value is clamped into [lower, upper]
  bool standardize = false;      // scores (mean - L_r) / (std(L) sigma): sigma becomes scale-free
  bool paper_mode = false;       // additive update of the absolute base rate, as the reference
  uint64_t seed = 0;             // permutations: a pure function of (seed, sync index)

  // Throws std::invalid_argument naming the key and value.
  void validate() const;
};

struct HdetState {
  int64_t step = 0;              // optimizer steps observed
  int64_t syncs = 0;             // parameter averages done
  double scale = 1.0;            // multiplicative correction of the base schedule
  double offset = 0.0;           // paper mode: additive correction of the absolute base rate
  double velocity = 0.0;
  double delta = 0.0;            // the last meta-update's Delta
  std::vector<int64_t> permutation;  // replica r uses multiplier rho[permutation[r]]
  std::vector<double> window_loss;   // per replica: sum of local losses since the last sync
  int64_t window_steps = 0;
};

class Hdet {
 public:
  explicit Hdet(HdetConfig config);
  const HdetConfig& config() const { return config_; }

  HdetState init() const;
  // rho_i = 1 + alpha (i - (N-1)/2) / max((N-1)/2, 0.5): mean exactly 1.
  const std::vector<double>& spread() const { return spread_; }
  // The base value after the auto-LR correction, for a scheduled value.
  double base_value(const HdetState& state, double scheduled) const;
  // Replica r's value: rho[permutation[r]] * base_value, clamped into [lower, upper].
  double replica_value(const HdetState& state, int64_t replica, double scheduled) const;
  // Adds one step's local losses (one per replica) to the window; advances the step.
  HdetState observe(HdetState state, const std::vector<double>& replica_losses) const;
  // True after the step that ends a sync window: average the parameters, then call sync().
  bool sync_due(const HdetState& state) const;
  // Whether a sync is due once `more_steps` further steps are observed: a loop that keeps its losses on the device
  // and hands them over only when they are needed (Python's HDET) asks this before observing them.
  bool sync_due_after(const HdetState& state, int64_t more_steps) const;
  // The meta-update from the window (auto_lr and past warmup), a fresh permutation, an empty window.
  HdetState sync(HdetState state, double scheduled) const;
  // The permutation for sync index k (k = 0: the first window).
  std::vector<int64_t> permutation(int64_t sync_index) const;
  // Throws std::invalid_argument, naming the field, for a state that is not one of this controller's (another
  // replica count, or a damaged or hand-edited checkpoint's): observe and sync would index past the replicas.
  void check_state(const HdetState& state) const;

 private:
  HdetConfig config_;
  std::vector<double> spread_;  // computed once: replica_value runs every step
};

}  // namespace lrkit::controllers
