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
  double mfu = 0;  // this step's model FLOPs over the peak for its duration (NaN: peak unknown)
  double loss_z = 0, grad_norm_z = 0;  // against the spike windows (NaN until they are full, or not scored)
  double skipped = 0;  // 0: the update was applied; 1: skipped, non-finite loss; 2: loss spike; 3: gradient-norm spike
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

// Where this session of a run started: /start's attributes (kind, checkpoint,
// checksum, step), replaced by each resumed session, and its /sessions/<i>'s.
struct RunStart {
  std::string kind = "fresh";  // fresh | resume | branch | init
  std::string checkpoint;      // the file it started from, if any
  std::string checksum;        // that file's format_checksum()
  int64_t step = 0;            // the first step this session trains
  // What this session trains on, for MFU: the device's name, the model's training
  // FLOPs per token (model_flops.hpp) and the devices' summed peak FLOP/s (0: unknown).
  std::string device = "cpu";
  double flops_per_token = 0, peak_flops = 0;
  std::string threads{};  // each worker's threads (worker_threads.hpp: "1 intra-op, 1 OpenBLAS")
};

// Where a step's records go. This base records nothing: every rank but 0 gets
// one, so the loop never asks whether it logs.
class RunLog {
 public:
  virtual ~RunLog() = default;
  virtual void record(const StepRecord&) {}
  // After a step's records (record, then record_hdet / record_weights when on):
  // every log.flush_every complete steps reach the disk together.
  virtual void end_step() {}
  // Once per step after record() when HDET is on: /hdet/replica_loss, /hdet/window_loss, /hdet/<name>/{...}.
  virtual void record_hdet(const HdetRecord&) {}
  // Once per step when reweighting is on: /reweight/{entropy, max_min_ratio, effective_size};
  // a non-empty histogram also goes to /reweight/histogram at /reweight/histogram_step.
  virtual void record_weights(int64_t /*step*/, const reweight::WeightStats&, const std::vector<double>& /*histogram*/) {}
  // Once per step with several data sources: /data/temperature, /data/probability
  // (the target p(tau) per source) and /data/rows (global-batch rows per source).
  virtual void record_data(double /*temperature*/, const std::vector<double>& /*probability*/, const std::vector<double>& /*rows*/) {}
  // Once per step with optim.cycle_momentum: /train/momentum (AdamW's beta1, SGD's momentum).
  virtual void record_momentum(double /*momentum*/) {}
  virtual void record_eval(const std::string& /*set*/, int64_t /*step*/, double /*loss*/) {}
  // Row-major [world, world] pairwise cosine estimates after `step` updates.
  virtual void record_cos_matrix(int64_t /*step*/, const std::vector<double>& /*matrix*/) {}
  // After the checkpoint at `step` is on disk: /checkpoints/{step, crc32}.
  virtual void record_checkpoint(int64_t /*step*/, uint32_t /*crc32*/) {}
  virtual void flush() {}
  virtual std::string path() const { return ""; }
  // The settings this session changed against the one before ("train.threads = 2 -> 1; ..."; "" where none or
  // where it is the first), as /sessions/<i> records them.
  virtual std::string changed_settings() const { return ""; }
};

// Each key that defines the run (the model, data sampling, optimizer, batch, seeds, controllers, the log's per-step
// series) whose value differs from the one in the run log's /config, and a worker count other than the log's (its
// per-rank series are that wide), both values named: "model.width = 16 there, 32 here"; and each data or evaluation
// file whose contents differ from those the log's /files records (a corpus rewritten in place, another file at the
// path). How the run is carried out (device, threads, accumulation, intervals, paths) may change. No log, or one
// lrkit cannot read back: none.
// `also_compared` keys are compared too (a sweep's results must be measured alike: eval.batches).
std::vector<std::string> settings_other_than_logged(const TrainConfig& config, int64_t world_size,
                                                    const std::vector<std::string>& also_compared = {});

// True for a key whose value changes neither a run's updates nor what its results measure: how often it logs,
// evaluates and checkpoints, how many checkpoints it keeps, its threads, profiling, peak and timeouts. A sweep run
// whose arguments differ only in such keys is the same run (sweep_extension.hpp).
bool changes_no_result(const std::string& key);

// Before a resume: throws std::invalid_argument listing settings_other_than_logged, and the way on.
void require_the_logged_settings(const TrainConfig& config, int64_t world_size);

// Rank 0's log: creates DIR (and parents) and DIR/log.h5 with provenance
// attributes, /config holding every key's effective value (config_values()),
// or, when `continues` (resumed in place), continues DIR/log.h5 keeping the
// rows before start.step. Either way the settings (/config, the command line,
// /start) become this session's, and /sessions/<i> records it beside the
// sessions before. Throws h5::Error naming the path.
std::unique_ptr<RunLog> open_run_log(const TrainConfig& config, int64_t world_size, const RunStart& start = RunStart(),
                                     bool continues = false);

}  // namespace lrkit::train
