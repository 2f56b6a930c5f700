// The skip-step policy of ALGORITHMS.md section 9, after llm.c's outlier
// detector (llmc/outlier_detector.h, which its -sl and -sg flags drive): each
// update's value (the loss, the gradient norm) is scored against the last
// `window` values that entered the detector, z = (x - mean) / std, and an
// update more than `threshold` standard deviations above is a spike, whose
// update the trainer skips. A spike's value stays out of the window, so one
// spike does not make the next look ordinary; from the third spike in a row on
// the values enter it (llm.c's rule), so a lasting change of level is learnt
// instead of skipped for ever. z is NaN, and nothing is a spike, until the
// window is full.
//
// Unlike llm.c, the value scored is not in the statistics it is scored
// against: llm.c's z over 128 values that include the new one can never exceed
// 127 / sqrt(128) = 11.2, whatever the spike.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace lrkit::diagnostics {

class SpikeDetector {
 public:
  static constexpr int64_t kEnterFromSpikesInARow = 3;

  struct Scored {
    double z;    // NaN until the window is full, and for a NaN value; +inf for +inf
    bool spike;  // z > threshold (threshold > 0), or a non-finite value (threshold > 0)
  };
  struct State {
    std::vector<double> window;  // the values that entered, oldest first
    int64_t spikes_in_a_row = 0;
  };

  // threshold 0: never a spike (z is still scored). Throws std::invalid_argument naming the setting (its name as the
  // caller spells it, e.g. "train.skip_loss_z", "train.spike_window") for a negative or non-finite threshold or a
  // window below 2.
  SpikeDetector(double threshold, int64_t window, const std::string& threshold_name, const std::string& window_name);

  // Scores one value against the window, then enters it unless it is a spike (or the third spike in a row or later)
  // or non-finite.
  Scored score(double value);

  State state() const { return {std::vector<double>(window_.begin(), window_.end()), spikes_in_a_row_}; }
  // Keeps the newest values when the state holds more than the window (a resume with a smaller window). Throws
  // std::invalid_argument for a non-finite value.
  void restore(const State& state);

 private:
  double threshold_;
  size_t capacity_;
  std::deque<double> window_;
  int64_t spikes_in_a_row_ = 0;
};

}  // namespace lrkit::diagnostics
