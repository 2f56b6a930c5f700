// The progress line every train.log_every steps: the window's mean loss, the
// rate, tokens per second over the window and the time left.
#pragma once

#include <chrono>
#include <cstdint>
#include <ostream>

namespace lrkit::train {

class ProgressMeter {
 public:
  // `mfu_of_one_second`: the MFU of a step that takes one second (the step's
  // FLOPs over the peak); 0: the peak is unknown and no MFU is shown.
  ProgressMeter(int64_t start_step, int64_t total_steps, double tokens_per_step, double mfu_of_one_second);
  // One step's loss; after the window's last step (`due`) prints the line and
  // returns true. `hdet_scale` > 0 adds the HDET correction of the schedule.
  bool add(int64_t step, double loss, double lr, bool due, double hdet_scale, std::ostream& out);
  double last_window_loss() const { return last_window_loss_; }
  double seconds() const;
  double tokens_per_second(int64_t steps_done) const;
  // This step's MFU from the time since the previous call (NaN without a peak).
  double step_mfu();

 private:
  using Clock = std::chrono::steady_clock;
  int64_t start_step_, total_steps_;
  double tokens_per_step_, mfu_of_one_second_;
  Clock::time_point start_ = Clock::now(), window_start_ = start_, step_start_ = start_;
  double window_loss_ = 0.0, last_window_loss_ = 0.0;
  int64_t window_steps_ = 0;
};

}  // namespace lrkit::train
