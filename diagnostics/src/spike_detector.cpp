#include "lrkit/diagnostics/spike_detector.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lrkit/common/numbers.hpp"

namespace lrkit::diagnostics {

SpikeDetector::SpikeDetector(double threshold, int64_t window, const std::string& threshold_name, const std::string& window_name)
    : threshold_(threshold), capacity_(static_cast<size_t>(window < 0 ? 0 : window)) {
  if (!std::isfinite(threshold) || threshold < 0)
    throw std::invalid_argument(threshold_name + " must be a number >= 0 (0: never skip; got " + format_number(threshold) + ")");
  if (window < 2) throw std::invalid_argument(window_name + " must be >= 2 (got " + std::to_string(window) + ")");
}

SpikeDetector::Scored SpikeDetector::score(double value) {
  const bool on = threshold_ > 0;
  if (!std::isfinite(value)) {
    spikes_in_a_row_ += on ? 1 : 0;
    return {std::isnan(value) ? NAN : value, on};
  }
  double z = NAN;
  if (window_.size() == capacity_) {
    double mean = 0;
    for (double v : window_) mean += v;
    mean /= static_cast<double>(capacity_);
    double squares = 0;
    for (double v : window_) squares += (v - mean) * (v - mean);
    const double std = std::sqrt(squares / static_cast<double>(capacity_));
    z = std > 0 ? (value - mean) / std : value == mean ? 0.0 : std::copysign(INFINITY, value - mean);
  }
  const bool spike = on && z > threshold_;
  spikes_in_a_row_ = spike ? spikes_in_a_row_ + 1 : 0;
  if (!spike || spikes_in_a_row_ >= kEnterFromSpikesInARow) {
    window_.push_back(value);
    if (window_.size() > capacity_) window_.pop_front();
  }
  return {z, spike};
}

void SpikeDetector::restore(const State& state) {
  for (double v : state.window)
    if (!std::isfinite(v)) throw std::invalid_argument("spike detector state holds a non-finite value");
  if (state.spikes_in_a_row < 0)
    throw std::invalid_argument("spike detector state holds spikes_in_a_row " + std::to_string(state.spikes_in_a_row) +
                                "; it counts, so it is >= 0");
  const size_t kept = std::min(state.window.size(), capacity_);
  window_.assign(state.window.end() - static_cast<std::ptrdiff_t>(kept), state.window.end());
  spikes_in_a_row_ = state.spikes_in_a_row;
}

}  // namespace lrkit::diagnostics
