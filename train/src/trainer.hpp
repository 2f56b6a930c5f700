// The reference trainer's object: construction assembles the pieces (process
// group, data, replicas, HDET, restore, run log, diagnostics, eval sets); run()
// owns the loop and step() reads top to bottom: hyper-parameters ->
// forward/backward -> gradient synchronization -> optimizer step -> record ->
// HDET after the step -> progress -> evaluation and checkpoint.
#pragma once

#include <torch/torch.h>

#include <cmath>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "evaluation.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/gradient_sync.hpp"
#include "lrkit/diagnostics/spike_detector.hpp"
#include "lrkit/distributed/hdet_ensemble.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/train/data_mixture.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/step_profiler.hpp"
#include "lrkit/train/worker_census.hpp"
#include "lrkit/train/trainer.hpp"
#include "lrkit/train/worker_placement.hpp"
#include "lrkit/train/worker_threads.hpp"
#include "progress_meter.hpp"
#include "replicas.hpp"
#include "run_plan.hpp"
#include "sample_reweighting.hpp"
#include "step_scalars.hpp"

namespace lrkit::train {

class Trainer {
 public:
  Trainer(const TrainConfig& config, std::ostream& progress, const std::function<void()>& starting);
  TrainSummary run();

 private:
  // One step's hyper-parameters: the schedule's values, HDET's base and spread.
  struct Hyperparameters {
    double lr = 0;                               // the replicas' mean rate (the schedule's, corrected by HDET)
    std::vector<double> scheduled;               // every spread hyper-parameter's scheduled value (lr first)
    std::vector<std::vector<double>> spread;     // [spread index][global replica], HDET only
    std::optional<double> momentum;              // optim.cycle_momentum: beta1 (SGD: momentum) of every replica
  };
  // What forward/backward left besides the gradients.
  struct Losses {
    torch::Tensor replicas;                      // this rank's replicas' losses, [replicas] float64
    std::optional<BatchWeights> batch_weights;   // reweighting only
    std::vector<double> sampling;                // the step's source distribution
  };
  struct Gradients {
    distributed::GradientSyncResult sync;
    torch::Tensor sketch;                        // this rank's gradient sketch, when due
  };

  void step(int64_t step);
  void run_step(int64_t step);
  Hyperparameters set_hyperparameters(int64_t step);
  Losses forward_backward(int64_t step);
  torch::Tensor replica_loss(Replica& replica, int64_t step, const std::vector<double>& sampling,
                             std::optional<BatchWeights>& batch_weights);
  torch::Tensor to_device(const torch::Tensor& host) const;
  Gradients synchronize(int64_t step);
  // How the step's update went: applied, or skipped for a non-finite loss or a spike; the spike z-scores.
  struct UpdateCheck {
    enum Outcome { applied = 0, nonfinite = 1, loss_spike = 2, grad_norm_spike = 3 };  // /train/skipped's codes
    Outcome outcome = applied;
    double loss_z = NAN, grad_norm_z = NAN;
  };
  UpdateCheck check_update(const StepScalars& scalars);
  void optimizer_step(int64_t step, const UpdateCheck& check);
  bool diverged(double loss);
  [[noreturn]] void stop_diverged(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars, const Losses& losses);
  [[noreturn]] void stop_on_signal(int64_t step, int signal);
  std::string last_good_checkpoint_or_none() const;  // what the stop messages name
  void throw_if_the_last_update_broke_the_model() const;
  void record(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars, const Losses& losses, const UpdateCheck& check);
  void hdet_after_step(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars);
  HdetRecord hdet_record(std::vector<double> window_loss, const Hyperparameters& hyper, const StepScalars& scalars) const;
  void evaluate_and_checkpoint(int64_t step);
  void save_checkpoints(int64_t step);
  void require_unchanged_data(int64_t steps_done);

  const TrainConfig& c_;
  std::ostream null_stream_{nullptr};
  std::ostream* progress_ = nullptr;             // rank 0's progress, the others' null stream
  schedules::Schedule schedule_;
  distributed::DistributedEnv env_;
  WorkerPlacement placement_;
  torch::Device device_;
  std::unique_ptr<distributed::Collective> collective_;
  WorkerCensus census_;    // where every worker trains: its machine and device, gathered at the rendezvous
  WorkerThreads threads_;  // after the census: where no launcher said, it counts the workers on this machine
  std::unique_ptr<distributed::Collective> solo_;  // local mode: each replica's own gradient
  int world_ = 1;
  bool lead_ = true;
  RunPlan plan_;
  DataMixture data_;
  std::vector<NamedTokens> eval_sets_;           // rank 0 only
  std::vector<Replica> replicas_;
  std::vector<std::vector<torch::Tensor>> replica_parameters_;
  std::optional<distributed::HdetEnsemble> hdet_;
  std::vector<Spread> spread_;                   // what HDET spreads (decided once)
  std::optional<Gpt> mean_model_;                // evaluation sees the replicas' mean when they differ
  int64_t start_step_ = 0;
  std::unique_ptr<RunLog> log_;
  distributed::GradientSyncOptions sync_options_;
  std::optional<distributed::GradientSketch> sketch_;  // the same projection on every rank
  int64_t micro_rows_ = 0;
  double tokens_per_step_ = 0;
  RunStart session_;                             // where this session started and what it trains on (/start)
  std::optional<ProgressMeter> meter_;
  std::optional<StepProfiler> profiler_;
  TrainSummary summary_;
  std::string last_checkpoint_;
  int64_t checkpointed_steps_ = -1;              // the steps done at the newest checkpoint this session wrote
  std::string last_good_checkpoint_;             // the newest written after a finite loss
  int64_t skipped_in_a_row_ = 0;                 // updates skipped on a non-finite loss since the last finite one
  diagnostics::SpikeDetector loss_spikes_, grad_norm_spikes_;  // train.skip_loss_z, train.skip_grad_z
};

}  // namespace lrkit::train
