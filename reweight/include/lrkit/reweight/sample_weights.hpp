// Loss-based sample reweighting (Sow et al., ICLR 2025, arXiv 2502.06733;
// ALGORITHMS.md section 8). Per step, over the global batch:
//   x_i = (2 l_i - (l_max + l_min)) / max(l_max - l_min, 1e-6)   in [-1, 1]
//   f   = LinUpper min(x + 1, 1) | Quadratic 1 - x^2 | Extremes |x| | Linear (x + 1) / 2
//   w_i proportional to n_i exp(f_i / r)     (n_i: the sample's token count)
// so max w / min w <= e^(1/r) for equal token counts, and r -> inf is the
// token-weighted mean. The weights sum to 1; the loss is sum_i w_i l_i with
// l_i the sample's mean per-token loss. Pure functions of the whole batch, so
// any split of the batch over ranks or micro-batches gives the same weights.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace lrkit::reweight {

enum class Strategy { uniform, linupper, quadratic, extremes, linear };

// "uniform" | "linupper" | "quadratic" | "extremes" | "linear"; throws
// std::invalid_argument naming the value and the choices.
Strategy parse_strategy(const std::string& name);
std::string to_string(Strategy strategy);

// f(x) of the strategy, for x in [-1, 1] (uniform: 0).
double score(Strategy strategy, double x);

// The weights of a global batch. `token_counts` empty: every sample counts
// alike. Throws std::invalid_argument for a non-positive strength, mismatched
// lengths, non-positive token counts or an empty batch. Non-finite losses get
// weight 0 (the step is then skipped or stopped by the trainer's own check).
std::vector<double> sample_weights(const std::vector<double>& losses, Strategy strategy, double strength,
                                   const std::vector<double>& token_counts = {});

// What the run log records about one step's weights.
struct WeightStats {
  double entropy = 0;          // -sum w log w, in nats (log N for uniform)
  double max_min_ratio = 1;    // max w / min w
  double effective_size = 0;   // 1 / sum w^2 (N for uniform)
};
// Throws std::invalid_argument for no weights or one that is negative or not finite.
WeightStats weight_stats(const std::vector<double>& weights);

// The most bins a histogram has: each is a column of the run log, written every histogram_every steps.
inline constexpr int64_t kMaxHistogramBins = 10'000;

// Counts of N * w_i in `bins` (1 to kMaxHistogramBins) equal bins over [0, max_relative] (the last bin also takes
// everything above): 1 is the uniform weight.
std::vector<double> relative_weight_histogram(const std::vector<double>& weights, int64_t bins, double max_relative);

}  // namespace lrkit::reweight
