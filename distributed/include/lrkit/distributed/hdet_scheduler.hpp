// HDET as a drop-in scheduler for a LibTorch data-parallel trainer (one
// replica per rank; ALGORITHMS.md section 6). After every optimizer step call
// step(local_loss): it gathers every rank's loss, averages the parameters
// across ranks every sync_every steps, runs the auto-LR meta-update, and
// writes this rank's next learning rate into the optimizer.
//
//   lrkit::train::HdetScheduler hdet(config, lrkit::schedules::parse_schedule("cosine(peak=1e-3)", steps),
//                                    optimizer, model->parameters(), collective);
//   for (...) { loss.backward(); /* all-reduce gradients */ optimizer.step(); hdet.step(loss); }
//
// Each parameter group keeps its proportion to the others (rate_ratios.hpp: read from the groups' rates when the
// scheduler is made, unless given; a group at 0 stays at 0): lr() is the rate of the first group with a non-zero
// one. A loop resumed where every group's rate is 0 gives the ratios() it saved (restore() refuses it otherwise).
//
// The gathered losses stay on the collective's device (NCCL's: the GPU) until the step that ends a sync window
// needs them: one copy to the host per window, not a wait for the device every step. state() hands them over.
#pragma once

#include <torch/torch.h>

#include "lrkit/controllers/hdet.hpp"
#include "lrkit/distributed/hdet_ensemble.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

class HdetScheduler {
 public:
  // config.replicas must equal the collective's world size.
  HdetScheduler(const controllers::HdetConfig& config, schedules::Schedule base, torch::optim::Optimizer& optimizer,
                std::vector<torch::Tensor> parameters, Collective& collective, std::vector<double> ratios = {});
  void step(const torch::Tensor& local_loss);  // one number, on any device
  void step(double local_loss);
  double lr() const;       // this rank's rate for the next step
  double base_lr() const;  // the corrected base rate for the next step
  const controllers::HdetState& state();  // every step's loss observed
  void restore(const controllers::HdetState& state);  // from a checkpoint; sets the optimizer's rate
  const std::vector<double>& ratios() const { return ratios_; }  // each group's rate over lr()

 private:
  int64_t next_step() const;  // the observed steps and those whose losses are pending
  void observe_pending();
  void apply();
  HdetEnsemble ensemble_;  // the learning rate only, one replica per rank
  schedules::Schedule base_;
  torch::optim::Optimizer& optimizer_;
  std::vector<double> ratios_;  // each group's rate over the first non-zero one's
  bool ratios_read_from_zero_rates_;  // several groups, every one at 0: the ratios (all 1) say nothing
  std::vector<torch::Tensor> parameters_;
  Collective& collective_;
  std::vector<torch::Tensor> pending_;  // per step since the last hand-over: every rank's loss, on the collective's device
};

}  // namespace lrkit::distributed
