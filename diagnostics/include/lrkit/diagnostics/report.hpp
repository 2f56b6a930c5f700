// `lrkit diagnose`: from per-rank signals to a report a person can act on
// (ALGORITHMS.md sections 7 and 9): how smooth the global loss is versus how
// worker dispersion moves, windows where dispersion jumps or consistency
// drops, persistently outlying ranks, loss and gradient-norm spikes, and a
// one-line verdict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {

// Defaults calibrated on healthy runs (bench/diagnose_false_alarms.sh: the
// quickstart with 2 and 4 workers and the ladder setting, 4 seeds each, none
// perturbed): no jump or drop of 3+ steps reached z 6 (one reached 5), no loss
// spike z 3, gradient-norm spikes reached z 13 (gradient norms are
// heavy-tailed), outlier z 3.0. Planted anomalies score z 12-40. The loss
// spread's shift z reached 4.6 over 18 such runs (6 seeds).
struct ReportOptions {
  // Trailing window of the robust z-scores (steps); default: 50, and for a long log 2 % of its analysed steps, up to
  // 500 (default_window). Over 180,000 healthy steps of 8 (4) ranks with i.i.d. noise, a 50-step window flagged 8
  // (18) jumps, whose z came from its noisy 50-step MAD; 100 steps flagged 0 (3), 150 and more none.
  std::optional<int64_t> window;
  double jump_z = 6.0;         // a dispersion jump / consistency drop: robust z beyond this
  double spike_z = 6.0;        // a loss spike: robust z above this
  double outlier_z = 5.0;      // a persistent outlier: binomial z of "most extreme rank" counts above this
  std::optional<int64_t> skip;  // steps ignored at the start (warmup transients); default: the first 10 %
  double grad_spike_z = 20.0;   // a gradient-norm spike: robust z above this
  double shift_z = 6.0;         // a loss-spread jump that lasts half a window: shift z (robust.hpp) beyond this
};

// A per-step series the report looks at, summarized.
struct MetricSummary {
  std::string name;
  double mean = 0, early = 0, late = 0;  // mean over the run; medians of the first and last quarter
  double roughness = 0;                  // robust relative wiggle around the trend
};

struct FlaggedWindow {
  std::string metric;  // e.g. loss_std (a jump) or consistency (a drop)
  double first_step = 0, last_step = 0, peak_step = 0;
  double peak_z = 0;
  int64_t flagged_steps = 0;  // steps past the threshold (a finding needs kMinFlaggedSteps)
  // "step": the per-step robust z of the 5-step median; "shift": the shift z of the next window / 2 steps (the
  // window then starts at its peak, the change's estimated first step).
  std::string test = "step";
  // The resume of an lrkit run (RankLog::resumes) within the window, if any: from 5 steps before its first step
  // (the smoothing median's length: a change may be flagged a few steps late) to its last.
  std::optional<double> resume_step;
};

// A jump or drop is a finding when this many steps of its window pass the
// threshold: silent inconsistency is a divergence that lasts.
constexpr int64_t kMinFlaggedSteps = 3;

struct OutlierRank {
  int64_t rank = 0;
  bool pair = false;         // 2 ranks: either may be the odd one (the deviations mirror each other)
  double first_step = 0;     // where the run of extreme counts starts (the most anomalous suffix)
  std::string metric;        // loss (highest), grad_norm (highest) or cos_to_mean (lowest)
  double fraction = 0;       // of steps on which it was the most extreme rank
  double expected = 0;       // 1 / ranks
  double z = 0;              // binomial z-score of the count
};

struct Spike {
  std::string series;  // loss or grad_norm
  double step = 0, value = 0, z = 0;
  std::optional<double> resume_step;  // the resume it came with, if any: in the 5 steps up to and including it
};

// NaN or Inf in a rank's series: always a finding.
struct NonFinite {
  std::string series;  // loss, grad_norm or cos_to_mean
  int64_t rank = 0;
  double first_step = 0;
  int64_t count = 0;   // steps with a non-finite value
};

struct Report {
  std::string source;
  int64_t ranks = 0, steps = 0;
  ReportOptions options;
  int64_t skip = 0, window = 0;    // as applied: the default skip resolved, the window shrunk for a short log
  std::vector<std::string> notes;  // what could not be analysed and why (one rank, too few steps)
  std::string consistency_metric;  // what "consistency" means for this log (or empty)
  bool records_sessions = false;   // RankLog's: an lrkit run log whose resumes are known (none: `resumes` empty)
  std::vector<Resume> resumes;     // the run's resumes, from its log
  MetricSummary loss;              // global loss (mean over ranks)
  std::vector<MetricSummary> dispersion;  // loss_std, loss_cv, grad_norm_std, consistency
  std::vector<FlaggedWindow> windows;
  std::vector<OutlierRank> outliers;
  std::vector<Spike> spikes;
  std::vector<NonFinite> non_finite;
  std::string verdict;
};

// The window analyze uses when none is given, for `steps` analysed steps: max(50, steps / 50), at most 500.
int64_t default_window(int64_t steps);

// A log shorter than twice the window is analysed with a window of half its
// length (said in notes); under 8 steps only the non-finite check and the
// outlier counts run. Throws RankLogError for invalid options.
Report analyze(const RankLog& log, const ReportOptions& options = ReportOptions());

std::string format_text(const Report& report);
std::string format_json(const Report& report);

}  // namespace lrkit::diagnostics
