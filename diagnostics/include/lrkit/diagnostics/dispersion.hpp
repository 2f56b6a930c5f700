// Per-step worker dispersion and gradient consistency from per-rank scalars
// (ALGORITHMS.md section 7; Li et al. 2026, arXiv 2602.14462). Pure C++: the
// trainer gathers the scalars, these functions turn them into the logged metrics.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

namespace lrkit::diagnostics {

// What every rank contributes at one optimizer step, gathered in rank order.
struct RankScalars {
  std::vector<double> loss;           // l_k, each worker's local loss
  std::vector<double> grad_norm;      // ||g_k||, local gradient after accumulation, before the all-reduce
  std::vector<double> dot_with_mean;  // g_k . g_bar (empty: not measured)
  double mean_grad_norm = 0.0;        // ||g_bar||, the all-reduced mean gradient
  // ||sum_k g_k / ||g_k|| ||^2 from the extra all-reduce of normalized gradients; NaN: not measured.
  double normalized_sum_sq = std::numeric_limits<double>::quiet_NaN();
};

constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();

struct StepDispersion {
  double loss_std = 0, loss_cv = 0, loss_range = 0;  // population std, std / |mean|, max - min
  int64_t loss_outlier_rank = 0;                     // the rank furthest from the mean loss
  double grad_norm_std = 0, grad_norm_cv = 0;
  std::vector<double> cos_to_mean;                   // cos(g_k, g_bar) per rank (NaN when not measured)
  double inner_pairwise = kNotMeasured;              // mean_{i != j} g_i . g_j, from scalars
  double inner_pairwise_normalized = kNotMeasured;   // the same over mean_k ||g_k||^2: C when all norms are equal
  double cos_pairwise = kNotMeasured;                // exact C = mean_{i < j} cos(g_i, g_j)
};

// Throws std::invalid_argument when the vectors disagree in length or are empty.
StepDispersion step_dispersion(const RankScalars& scalars);

// mean_{i != j} g_i . g_j = (N^2 ||g_bar||^2 - sum_k ||g_k||^2) / (N (N - 1)); NaN for N = 1.
double mean_pairwise_inner(const std::vector<double>& grad_norms, double mean_grad_norm);

// sum_{i != j} cos_ij = ||sum_k u_k||^2 - N with u_k = g_k / ||g_k||, so
// C = (||sum u||^2 - N) / (N (N - 1)); NaN for N = 1.
double mean_pairwise_cosine(double normalized_sum_sq, int64_t ranks);

// Pairwise cosine estimates from per-rank sketches S g_k (rows of a row-major
// [ranks, dim] matrix) over the exact norms: <S g_i, S g_j> / (||g_i|| ||g_j||).
// Returns a row-major [ranks, ranks] matrix with 1 on the diagonal.
std::vector<double> sketch_cosine_matrix(const std::vector<double>& sketches, int64_t dim,
                                         const std::vector<double>& grad_norms);

// Mean of the strictly upper triangle of a row-major [n, n] matrix.
double mean_off_diagonal(const std::vector<double>& matrix, int64_t n);

}  // namespace lrkit::diagnostics
