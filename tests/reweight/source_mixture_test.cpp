// Temperature probabilities over data sources (ALGORITHMS.md section 8).
#include "lrkit/reweight/source_mixture.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace lrkit::reweight {
namespace {

TEST(TemperatureProbabilities, FollowTheFormulaAndItsLimits) {
  const std::vector<double> q = {0.7, 0.2, 0.1};
  const auto same = temperature_probabilities(q, 1.0);
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(same[i], q[i], 1e-15);
  const auto p = temperature_probabilities(q, 2.0);  // q_i^(1/2) / sum_j q_j^(1/2)
  const double norm = std::sqrt(0.7) + std::sqrt(0.2) + std::sqrt(0.1);
  for (size_t i = 0; i < q.size(); ++i) EXPECT_NEAR(p[i], std::sqrt(q[i]) / norm, 1e-15);
  const auto flat = temperature_probabilities(q, 1e6);
  for (double v : flat) EXPECT_NEAR(v, 1.0 / 3.0, 1e-5);
  const auto sharp = temperature_probabilities(q, 0.01);  // log space: no underflow to 0/0
  EXPECT_NEAR(sharp[0], 1.0, 1e-12);
  EXPECT_THROW(temperature_probabilities(q, 0.0), std::invalid_argument);
  EXPECT_THROW(temperature_probabilities({0.5, 0.0}, 1.0), std::invalid_argument);
}

}  // namespace
}  // namespace lrkit::reweight
