#include "lrkit/reweight/source_mixture.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "lrkit/common/numbers.hpp"

namespace lrkit::reweight {

std::vector<double> temperature_probabilities(const std::vector<double>& q, double tau) {
  if (!(tau > 0) || !std::isfinite(tau)) throw std::invalid_argument("temperature must be finite and > 0 (got " + format_number(tau) + ")");
  double top = -INFINITY;
  std::vector<double> p(q.size());
  for (size_t i = 0; i < q.size(); ++i) {
    if (!(q[i] > 0)) throw std::invalid_argument("source proportions must be > 0 (entry " + std::to_string(i + 1) + ")");
    p[i] = std::log(q[i]) / tau;
    top = std::max(top, p[i]);
  }
  double sum = 0.0;
  for (auto& v : p) sum += (v = std::exp(v - top));
  for (auto& v : p) v /= sum;
  return p;
}

}  // namespace lrkit::reweight
