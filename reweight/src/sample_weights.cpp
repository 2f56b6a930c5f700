#include "lrkit/reweight/sample_weights.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "lrkit/common/numbers.hpp"

namespace lrkit::reweight {

Strategy parse_strategy(const std::string& name) {
  if (name == "uniform") return Strategy::uniform;
  if (name == "linupper") return Strategy::linupper;
  if (name == "quadratic") return Strategy::quadratic;
  if (name == "extremes") return Strategy::extremes;
  if (name == "linear") return Strategy::linear;
  throw std::invalid_argument("reweight.strategy must be uniform, linupper, quadratic, extremes or linear (got '" +
                              name + "')");
}

std::string to_string(Strategy strategy) {
  switch (strategy) {
    case Strategy::uniform: return "uniform";
    case Strategy::linupper: return "linupper";
    case Strategy::quadratic: return "quadratic";
    case Strategy::extremes: return "extremes";
    case Strategy::linear: return "linear";
  }
  return "?";
}

double score(Strategy strategy, double x) {
  switch (strategy) {
    case Strategy::uniform: return 0.0;
    case Strategy::linupper: return std::min(x + 1.0, 1.0);
    case Strategy::quadratic: return 1.0 - x * x;
    case Strategy::extremes: return std::fabs(x);
    case Strategy::linear: return (x + 1.0) / 2.0;
  }
  return 0.0;
}

std::vector<double> sample_weights(const std::vector<double>& losses, Strategy strategy, double strength,
                                   const std::vector<double>& token_counts) {
  if (losses.empty()) throw std::invalid_argument("sample_weights: empty batch");
  if (!(strength > 0)) throw std::invalid_argument("reweight.strength must be > 0 (got " + format_number(strength) + ")");
  if (!token_counts.empty() && token_counts.size() != losses.size())
    throw std::invalid_argument("sample_weights: " + std::to_string(token_counts.size()) + " token counts for " +
                                std::to_string(losses.size()) + " samples");
  for (size_t i = 0; i < token_counts.size(); ++i)
    if (!(token_counts[i] > 0) || !std::isfinite(token_counts[i]))
      throw std::invalid_argument("sample_weights: sample " + std::to_string(i) + "'s token count is " +
                                  format_number(token_counts[i]) + "; counts must be finite and > 0");
  // x = ((l - low) - (high - l)) / (high - low), each term halved: losses near the double's limit (a diverging
  // batch's) made high - low Inf, and every weight NaN.
  double low = std::numeric_limits<double>::infinity(), high = -low;
  for (double l : losses)
    if (std::isfinite(l)) low = std::min(low, l), high = std::max(high, l);
  const double half_low = low / 2, half_high = high / 2;
  const double half_range = std::max(half_high - half_low, 5e-7);
  std::vector<double> w(losses.size());
  double top = -std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < losses.size(); ++i) {
    if (!std::isfinite(losses[i])) continue;
    const double half = losses[i] / 2;
    w[i] = score(strategy, std::clamp(((half - half_low) - (half_high - half)) / half_range, -1.0, 1.0));
    top = std::max(top, w[i]);
  }
  // exp((f - max f) / r): at most 1, so no overflow at a small r, and a strength so small that f / r is Inf (1e-310)
  // gives the top samples all the weight where it gave NaN.
  double total = 0.0;
  for (size_t i = 0; i < losses.size(); ++i) {
    const double tokens = token_counts.empty() ? 1.0 : token_counts[i];
    w[i] = std::isfinite(losses[i]) ? tokens * std::exp((w[i] - top) / strength) : 0.0;
    total += w[i];
  }
  if (total == 0.0) return std::vector<double>(losses.size(), 1.0 / static_cast<double>(losses.size()));
  for (auto& x : w) x /= total;
  return w;
}

WeightStats weight_stats(const std::vector<double>& weights) {
  if (weights.empty()) throw std::invalid_argument("weight_stats: no weights (an empty batch)");
  for (size_t i = 0; i < weights.size(); ++i)
    if (!(weights[i] >= 0) || !std::isfinite(weights[i]))
      throw std::invalid_argument("weight_stats: weight " + std::to_string(i) + " is " + format_number(weights[i]) +
                                  "; weights are finite and >= 0");
  WeightStats s;
  double low = std::numeric_limits<double>::infinity(), high = 0.0, squares = 0.0;
  for (double w : weights) {
    if (w > 0) s.entropy -= w * std::log(w);
    low = std::min(low, w);
    high = std::max(high, w);
    squares += w * w;
  }
  s.max_min_ratio = low > 0 ? high / low : std::numeric_limits<double>::infinity();
  s.effective_size = squares > 0 ? 1.0 / squares : 0.0;
  return s;
}

std::vector<double> relative_weight_histogram(const std::vector<double>& weights, int64_t bins, double max_relative) {
  if (bins < 1 || bins > kMaxHistogramBins || !(max_relative > 0) || !std::isfinite(max_relative))
    throw std::invalid_argument("relative_weight_histogram: bins must be in [1, " + std::to_string(kMaxHistogramBins) +
                                "] and max_relative a finite number > 0 (got " + std::to_string(bins) + " and " +
                                format_number(max_relative) + ")");
  std::vector<double> counts(static_cast<size_t>(bins), 0.0);
  const double n = static_cast<double>(weights.size());
  for (double w : weights) {
    const auto bin = static_cast<int64_t>(std::floor(n * w / max_relative * static_cast<double>(bins)));
    counts[static_cast<size_t>(std::clamp<int64_t>(bin, 0, bins - 1))] += 1.0;
  }
  return counts;
}

}  // namespace lrkit::reweight
