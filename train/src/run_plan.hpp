// The trainer's modes, decided once from the config and the world size: the
// step loop asks these flags and predicates, never the config's strings.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct RunPlan {
  RunPlan(const TrainConfig& c, int world)
      : bf16(c.train.precision == Precision::bf16),
        local_mode(c.hdet.enabled && c.hdet.mode == HdetMode::local),
        identical_replicas(c.hdet_replicas_identical()),
        diagnostics(c.diagnostics.enabled),
        exact_pairwise(c.diagnostics.enabled && c.diagnostics.pairwise == Pairwise::exact && world > 1),
        sketching(c.diagnostics.enabled && world > 1 && !local_mode &&
                  (c.diagnostics.pairwise == Pairwise::sketch || c.diagnostics.matrix_every > 0)),
        sketch_pairwise(c.diagnostics.pairwise == Pairwise::sketch),
        reweighting(c.reweight.enabled()),
        several_sources(!c.data.sources.empty()),
        stop_on_nonfinite(c.train.nonfinite == NonFinite::stop),
        skip_limit(c.train.skip_limit),
        steps(c.train.steps),
        log_every(c.train.log_every),
        eval_every(c.eval.every),
        checkpoint_every(c.checkpoint.every),
        matrix_every(c.diagnostics.matrix_every),
        histogram_every(c.reweight.histogram_every),
        milestones(c.checkpoint_steps()) {}

  bool bf16, local_mode, identical_replicas, diagnostics, exact_pairwise, sketching, sketch_pairwise, reweighting,
      several_sources, stop_on_nonfinite;
  int64_t skip_limit, steps, log_every, eval_every, checkpoint_every, matrix_every, histogram_every;
  std::vector<int64_t> milestones;  // checkpoint.at: checkpointed, kept and evaluated

  // After update `step` (0-based), i.e. with step + 1 updates done:
  bool last(int64_t step) const { return step + 1 == steps; }
  bool milestone(int64_t step) const { return std::binary_search(milestones.begin(), milestones.end(), step + 1); }
  bool matrix_due(int64_t step) const { return sketching && every(matrix_every, step); }
  bool sketch_due(int64_t step) const { return sketching && (sketch_pairwise || matrix_due(step)); }
  bool progress_due(int64_t step) const { return every(log_every, step) || last(step); }
  bool eval_due(int64_t step) const { return last(step) || milestone(step) || every(eval_every, step); }
  bool checkpoint_due(int64_t step) const { return last(step) || milestone(step) || every(checkpoint_every, step); }
  bool histogram_due(int64_t step) const { return every(histogram_every, step); }

 private:
  static bool every(int64_t n, int64_t step) { return n > 0 && (step + 1) % n == 0; }
};

}  // namespace lrkit::train
