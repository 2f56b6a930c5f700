#include "progress_meter.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

namespace lrkit::train {

namespace {

std::string format_duration(double seconds) {
  char buf[32];
  const auto s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace

ProgressMeter::ProgressMeter(int64_t start_step, int64_t total_steps, double tokens_per_step, double mfu_of_one_second)
    : start_step_(start_step), total_steps_(total_steps), tokens_per_step_(tokens_per_step),
      mfu_of_one_second_(mfu_of_one_second) {}

double ProgressMeter::step_mfu() {
  const auto now = Clock::now();
  const double seconds = std::chrono::duration<double>(now - step_start_).count();
  step_start_ = now;
  if (mfu_of_one_second_ <= 0) return std::numeric_limits<double>::quiet_NaN();
  return mfu_of_one_second_ / std::max(seconds, 1e-9);
}

bool ProgressMeter::add(int64_t step, double loss, double lr, bool due, double hdet_scale, std::ostream& out) {
  window_loss_ += loss;
  ++window_steps_;
  if (!due) return false;
  const auto now = Clock::now();
  const double window_seconds = std::chrono::duration<double>(now - window_start_).count();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double tps = tokens_per_step_ * static_cast<double>(window_steps_) / std::max(window_seconds, 1e-9);
  const double eta = elapsed / static_cast<double>(step + 1 - start_step_) * static_cast<double>(total_steps_ - step - 1);
  char line[240];
  std::snprintf(line, sizeof line, "step %6lld/%lld  loss %.4f  %s %.3e  %8.0f tok/s  ETA %s",
                static_cast<long long>(step + 1), static_cast<long long>(total_steps_),
                window_loss_ / static_cast<double>(window_steps_), hdet_scale > 0 ? "base lr" : "lr", lr, tps,
                format_duration(eta).c_str());
  out << line;
  if (mfu_of_one_second_ > 0) {
    std::snprintf(line, sizeof line, "  MFU %.1f%%",
                  100.0 * mfu_of_one_second_ * static_cast<double>(window_steps_) / std::max(window_seconds, 1e-9));
    out << line;
  }
  if (hdet_scale > 0) {
    std::snprintf(line, sizeof line, "  (x%.3f of the schedule)", hdet_scale);
    out << line;
  }
  out << std::endl;
  last_window_loss_ = window_loss_ / static_cast<double>(window_steps_);
  window_loss_ = 0.0;
  window_steps_ = 0;
  window_start_ = now;
  return true;
}

double ProgressMeter::seconds() const { return std::chrono::duration<double>(Clock::now() - start_).count(); }

double ProgressMeter::tokens_per_second(int64_t steps_done) const {
  return tokens_per_step_ * static_cast<double>(steps_done) / seconds();
}

}  // namespace lrkit::train
