// The run log of a training run: DIR/log.h5 with provenance attributes and
// one row per optimizer step (DESIGN.md "Run log layout"), built on the
// SWMR series log so it can be read live and survives a kill.
#pragma once

#include <memory>
#include <string>

#include "lrkit/diagnostics/dispersion.hpp"
#include "lrkit/h5/series_log.hpp"
#include "lrkit/reweight/sample_weights.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct StepRecord {
  int64_t step = 0;
  double lr = 0, loss = 0, grad_norm = 0, grad_norm_l1 = 0, tokens = 0, wall_s = 0;
  std::vector<double> rank_loss, rank_grad_norm;  // per worker, local (before the all-reduce)
  const diagnostics::StepDispersion* dispersion = nullptr;  // required when diagnostics are enabled
};

// HDET's per-step state (replicas in global order), when hdet.enabled.
struct HdetRecord {
  struct Spread {
    double base = 0, scale = 1, delta = 0, velocity = 0;  // after the step's sync, if any
    std::vector<double> replica;                           // every replica's value this step
  };
  std::vector<double> replica_loss;  // every replica's local loss this step
  std::vector<double> window_loss;   // every replica's mean loss over the sync window so far
  std::vector<Spread> spread;        // one per TrainConfig::hdet_spread() entry
};

class RunLog {
 public:
  // Creates DIR (and parents) and DIR/log.h5, or, when resuming at
  // `resume_step` > 0, continues DIR/log.h5 keeping the rows before that
  // step. Throws h5::Error naming the path.
  RunLog(const TrainConfig& config, int64_t world_size, int64_t resume_step = 0);
  void record(const StepRecord& row);
  // After a step's records (record, then record_hdet / record_weights when on):
  // every log.flush_every complete steps reach the disk together.
  void end_step();
  // Once per step after record() when HDET is on: /hdet/replica_loss, /hdet/window_loss, /hdet/<name>/{...}.
  void record_hdet(const HdetRecord& row);
  // Once per step when reweighting is on: /reweight/{entropy, max_min_ratio, effective_size};
  // a non-empty histogram also goes to /reweight/histogram at /reweight/histogram_step.
  void record_weights(int64_t step, const reweight::WeightStats& stats, const std::vector<double>& histogram);
  // Once per step with several data sources: /data/temperature, /data/probability
  // (the target p(tau) per source) and /data/rows (global-batch rows per source).
  void record_data(double temperature, const std::vector<double>& probability, const std::vector<double>& rows);
  void record_eval(const std::string& set, int64_t step, double loss);
  // Row-major [world, world] pairwise cosine estimates after `step` updates.
  void record_cos_matrix(int64_t step, const std::vector<double>& matrix);
  void record_checkpoint(int64_t step);
  void flush() { log_->flush(); }
  const std::string& path() const { return log_->path(); }

 private:
  bool diagnostics_;
  std::vector<std::string> hdet_spread_;  // empty: HDET off
  int64_t flush_every_;
  int64_t since_flush_ = 0;
  std::unique_ptr<h5::SeriesLog> log_;
};

}  // namespace lrkit::train
