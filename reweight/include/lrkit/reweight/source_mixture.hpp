// Temperature sampling over data sources (Li et al. 2024, arXiv 2410.04579;
// ALGORITHMS.md section 8): sources with proportions q_i are drawn with
// p_i(tau) = q_i^(1/tau) / sum_j q_j^(1/tau), or drawn from q and upweighted
// by p_i / q_i. tau = 1 is q, tau -> inf uniform, tau -> 0 the largest source.
#pragma once

#include <vector>

namespace lrkit::reweight {

// p(tau), computed in log space; throws std::invalid_argument for tau <= 0 or a q_i <= 0.
std::vector<double> temperature_probabilities(const std::vector<double>& q, double tau);

}  // namespace lrkit::reweight
