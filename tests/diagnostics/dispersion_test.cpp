// The per-step dispersion metrics against their definitions computed the long way.
#include "lrkit/diagnostics/dispersion.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace lrkit::diagnostics {
namespace {

struct Vectors {
  std::vector<std::vector<double>> g;  // one gradient per rank
  std::vector<double> mean;
};

Vectors random_gradients(int ranks, int dim, std::mt19937_64& rng) {
  std::normal_distribution<double> normal;
  Vectors v{std::vector<std::vector<double>>(static_cast<size_t>(ranks), std::vector<double>(static_cast<size_t>(dim))),
            std::vector<double>(static_cast<size_t>(dim), 0.0)};
  for (auto& g : v.g)
    for (int d = 0; d < dim; ++d) {
      g[static_cast<size_t>(d)] = normal(rng) + 0.5;  // a shared direction plus noise
      v.mean[static_cast<size_t>(d)] += g[static_cast<size_t>(d)] / ranks;
    }
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

TEST(Dispersion, ScalarFormsEqualTheirDefinitions) {
  std::mt19937_64 rng(7);
  for (int ranks : {2, 3, 4, 8}) {
    const auto v = random_gradients(ranks, 50, rng);
    RankScalars s;
    std::vector<double> unit_sum(50, 0.0);
    for (int k = 0; k < ranks; ++k) {
      const auto& g = v.g[static_cast<size_t>(k)];
      s.loss.push_back(2.0 + 0.1 * k * k);
      s.grad_norm.push_back(std::sqrt(dot(g, g)));
      s.dot_with_mean.push_back(dot(g, v.mean));
      for (size_t d = 0; d < 50; ++d) unit_sum[d] += g[d] / s.grad_norm.back();
    }
    s.mean_grad_norm = std::sqrt(dot(v.mean, v.mean));
    s.normalized_sum_sq = dot(unit_sum, unit_sum);
    const auto d = step_dispersion(s);

    double inner = 0, cos = 0, mean_loss = 0;
    for (int i = 0; i < ranks; ++i) {
      mean_loss += s.loss[static_cast<size_t>(i)] / ranks;
      for (int j = 0; j < ranks; ++j) {
        if (i == j) continue;
        const double ij = dot(v.g[static_cast<size_t>(i)], v.g[static_cast<size_t>(j)]);
        inner += ij / (ranks * (ranks - 1));
        cos += ij / (s.grad_norm[static_cast<size_t>(i)] * s.grad_norm[static_cast<size_t>(j)]) / (ranks * (ranks - 1));
      }
    }
    double var = 0;
    for (double l : s.loss) var += (l - mean_loss) * (l - mean_loss) / ranks;
    EXPECT_NEAR(d.loss_std, std::sqrt(var), 1e-12);
    EXPECT_NEAR(d.loss_cv, std::sqrt(var) / mean_loss, 1e-12);
    EXPECT_NEAR(d.loss_range, 0.1 * (ranks - 1) * (ranks - 1), 1e-12);
    EXPECT_EQ(d.loss_outlier_rank, ranks - 1);
    EXPECT_NEAR(d.inner_pairwise, inner, 1e-9 * std::fabs(inner)) << ranks << " ranks";
    EXPECT_NEAR(d.cos_pairwise, cos, 1e-12) << ranks << " ranks";
    for (int k = 0; k < ranks; ++k) {
      const auto& g = v.g[static_cast<size_t>(k)];
      EXPECT_NEAR(d.cos_to_mean[static_cast<size_t>(k)], dot(g, v.mean) / std::sqrt(dot(g, g) * dot(v.mean, v.mean)), 1e-12);
    }
  }
}

TEST(Dispersion, AStepWithAZeroGradientHasNoPairwiseCosine) {
  // Ranks 0 and 1 agree (u = e1), rank 2's gradient is zero: its unit vector counts as 0 in the sum, which read as
  // (4 - 3) / 6 = 1/6, a mean over pairs of which two have no cosine at all.
  RankScalars s;
  s.loss = {1.0, 1.0, 1.0};
  s.grad_norm = {2.0, 3.0, 0.0};
  s.dot_with_mean = {2.0 * 5.0 / 3.0, 3.0 * 5.0 / 3.0, 0.0};
  s.mean_grad_norm = 5.0 / 3.0;
  s.normalized_sum_sq = 4.0;  // ||e1 + e1 + 0||^2
  const auto d = step_dispersion(s);
  EXPECT_TRUE(std::isnan(d.cos_pairwise)) << d.cos_pairwise;
  EXPECT_TRUE(std::isnan(d.cos_to_mean[2]));
  EXPECT_DOUBLE_EQ(d.cos_to_mean[0], 1.0);
  s.grad_norm[2] = 1.0;  // the same sum with every gradient nonzero is measured
  EXPECT_DOUBLE_EQ(step_dispersion(s).cos_pairwise, 1.0 / 6.0);
}

TEST(Dispersion, IdenticalWorkersHaveNoDispersionAndFullConsistency) {
  RankScalars s{{3.0, 3.0, 3.0}, {2.0, 2.0, 2.0}, {4.0, 4.0, 4.0}, 2.0, 9.0};
  const auto d = step_dispersion(s);
  EXPECT_EQ(d.loss_std, 0.0);
  EXPECT_EQ(d.grad_norm_std, 0.0);
  EXPECT_DOUBLE_EQ(d.cos_pairwise, 1.0);
  EXPECT_DOUBLE_EQ(d.inner_pairwise_normalized, 1.0);
  for (double c : d.cos_to_mean) EXPECT_DOUBLE_EQ(c, 1.0);
}

TEST(Dispersion, OneWorkerHasNoPairsAndMismatchesAreErrors) {
  const auto d = step_dispersion({{2.5}, {1.0}, {1.0}, 1.0, 1.0});
  EXPECT_TRUE(std::isnan(d.inner_pairwise));
  EXPECT_TRUE(std::isnan(d.cos_pairwise));
  EXPECT_EQ(d.loss_std, 0.0);
  EXPECT_THROW(step_dispersion({{1.0, 2.0}, {1.0}, {}, 1.0}), std::invalid_argument);
  EXPECT_THROW(step_dispersion({}), std::invalid_argument);
  EXPECT_THROW(sketch_cosine_matrix({1.0, 2.0, 3.0}, 2, {1.0, 1.0}), std::invalid_argument);
}

TEST(Dispersion, SketchMatrixIsExactForAnIdentitySketch) {
  // With dim = the vector length and S = I the "estimate" is the exact cosine.
  const std::vector<double> g = {1, 0, 0, 1, 1, 1};  // three ranks, dim 2
  const std::vector<double> norms = {1, 1, std::sqrt(2.0)};
  const auto m = sketch_cosine_matrix(g, 2, norms);
  EXPECT_DOUBLE_EQ(m[0 * 3 + 1], 0.0);
  EXPECT_NEAR(m[0 * 3 + 2], 1 / std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(m[2 * 3 + 1], 1 / std::sqrt(2.0), 1e-15);
  EXPECT_EQ(m[4], 1.0);
  EXPECT_NEAR(mean_off_diagonal(m, 3), std::sqrt(2.0) / 3, 1e-15);
}

}  // namespace
}  // namespace lrkit::diagnostics
