#include "lrkit/schedules/summary.hpp"

#include <algorithm>

#include "lrkit/schedules/spec.hpp"

namespace lrkit::schedules {

Summary summarize(const Schedule& schedule, int64_t steps) {
  Summary s;
  s.steps = steps;
  s.peak = schedule(0);
  for (int64_t t = 1; t <= steps; ++t) {
    const double v = schedule(t);
    if (v > s.peak) {
      s.peak = v;
      s.peak_step = t;
    }
  }
  s.final_value = schedule(steps);
  for (Phase p : schedule.phases()) {
    if (p.begin >= steps) break;
    p.end = std::min(p.end, steps);
    if (p.kind == PhaseKind::Warmup && p.begin == s.warmup_end) s.warmup_end = p.end;
    if (p.kind == PhaseKind::Decay && !s.decay_start) s.decay_start = p.begin;
    s.phases.push_back(p);
  }
  for (int64_t c : schedule.checkpoints())
    if (c <= steps) s.checkpoints.push_back(c);
  return s;
}

std::string peak_warning(const Summary& summary) {
  if (!(summary.peak > kHighestUsualRate)) return "";
  return "the schedule peaks at " + format_number(summary.peak) + " (step " + std::to_string(summary.peak_step) +
         "); learning rates above " + format_number(kHighestUsualRate) + " rarely train";
}

}  // namespace lrkit::schedules
