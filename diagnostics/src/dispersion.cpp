#include "lrkit/diagnostics/dispersion.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace lrkit::diagnostics {

namespace {

double mean(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double population_std(const std::vector<double>& v, double m) {
  double sum = 0.0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size()));
}

double ratio(double numerator, double denominator) {
  return denominator != 0.0 ? numerator / denominator : kNotMeasured;
}

}  // namespace

double mean_pairwise_inner(const std::vector<double>& grad_norms, double mean_grad_norm) {
  const auto n = static_cast<double>(grad_norms.size());
  if (grad_norms.size() < 2) return kNotMeasured;
  double sum_sq = 0.0;
  for (double g : grad_norms) sum_sq += g * g;
  return (n * n * mean_grad_norm * mean_grad_norm - sum_sq) / (n * (n - 1.0));
}

double mean_pairwise_cosine(double normalized_sum_sq, int64_t ranks) {
  if (ranks < 2 || std::isnan(normalized_sum_sq)) return kNotMeasured;
  const auto n = static_cast<double>(ranks);
  return (normalized_sum_sq - n) / (n * (n - 1.0));
}

std::vector<double> sketch_cosine_matrix(const std::vector<double>& sketches, int64_t dim,
                                         const std::vector<double>& grad_norms) {
  const auto n = static_cast<int64_t>(grad_norms.size());
  if (dim < 1 || static_cast<int64_t>(sketches.size()) != n * dim)
    throw std::invalid_argument("sketch matrix has " + std::to_string(sketches.size()) + " values, expected " +
                                std::to_string(n) + " ranks x " + std::to_string(dim));
  std::vector<double> cos(static_cast<size_t>(n * n), 1.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      double dot = 0.0;
      for (int64_t d = 0; d < dim; ++d) dot += sketches[static_cast<size_t>(i * dim + d)] * sketches[static_cast<size_t>(j * dim + d)];
      const double c = ratio(dot, grad_norms[static_cast<size_t>(i)] * grad_norms[static_cast<size_t>(j)]);
      cos[static_cast<size_t>(i * n + j)] = cos[static_cast<size_t>(j * n + i)] = c;
    }
  return cos;
}

double mean_off_diagonal(const std::vector<double>& matrix, int64_t n) {
  if (n < 2) return kNotMeasured;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) sum += matrix[static_cast<size_t>(i * n + j)];
  return sum / static_cast<double>(n * (n - 1) / 2);
}

StepDispersion step_dispersion(const RankScalars& s) {
  const size_t n = s.loss.size();
  if (n == 0 || s.grad_norm.size() != n || (!s.dot_with_mean.empty() && s.dot_with_mean.size() != n))
    throw std::invalid_argument("per-rank scalars disagree: " + std::to_string(s.loss.size()) + " losses, " +
                                std::to_string(s.grad_norm.size()) + " gradient norms, " +
                                std::to_string(s.dot_with_mean.size()) + " inner products");
  StepDispersion d;
  const double loss_mean = mean(s.loss);
  d.loss_std = population_std(s.loss, loss_mean);
  d.loss_cv = ratio(d.loss_std, std::fabs(loss_mean));
  const auto [lo, hi] = std::minmax_element(s.loss.begin(), s.loss.end());
  d.loss_range = *hi - *lo;
  size_t furthest = 0;
  for (size_t k = 1; k < n; ++k)
    if (std::fabs(s.loss[k] - loss_mean) > std::fabs(s.loss[furthest] - loss_mean)) furthest = k;
  d.loss_outlier_rank = static_cast<int64_t>(furthest);

  const double norm_mean = mean(s.grad_norm);
  d.grad_norm_std = population_std(s.grad_norm, norm_mean);
  d.grad_norm_cv = ratio(d.grad_norm_std, norm_mean);

  d.cos_to_mean.assign(n, kNotMeasured);
  for (size_t k = 0; k < s.dot_with_mean.size(); ++k)
    d.cos_to_mean[k] = ratio(s.dot_with_mean[k], s.grad_norm[k] * s.mean_grad_norm);
  d.inner_pairwise = mean_pairwise_inner(s.grad_norm, s.mean_grad_norm);
  double mean_sq = 0.0;
  for (double g : s.grad_norm) mean_sq += g * g / static_cast<double>(n);
  d.inner_pairwise_normalized = ratio(d.inner_pairwise, mean_sq);
  // A cosine with a zero gradient is undefined, so is the mean over pairs that include one: the unit-vector sum
  // counts a zero gradient's unit vector as 0, which (S - n) / (n (n - 1)) read as anti-correlation (-0.5 for 2 ranks).
  const bool a_zero_gradient = std::any_of(s.grad_norm.begin(), s.grad_norm.end(), [](double g) { return g == 0.0; });
  d.cos_pairwise = a_zero_gradient ? kNotMeasured : mean_pairwise_cosine(s.normalized_sum_sq, static_cast<int64_t>(n));
  return d;
}

}  // namespace lrkit::diagnostics
