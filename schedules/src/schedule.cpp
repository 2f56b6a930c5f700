#include "lrkit/schedules/schedule.hpp"

#include <cmath>
#include <stdexcept>

namespace lrkit::schedules {

const char* phase_kind_name(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::Warmup: return "warmup";
    case PhaseKind::Stable: return "stable";
    case PhaseKind::Decay: return "decay";
    case PhaseKind::Ramp: return "ramp";
    case PhaseKind::Cycle: return "cycle";
    case PhaseKind::Table: return "table";
  }
  return "?";
}

Schedule::Schedule(NodePtr node) : node_(std::move(node)) {
  if (!node_) throw std::invalid_argument("Schedule: null node");
  total_ = node_->total();
}

double Schedule::at(double t) const {
  if (!(t >= 0.0)) throw std::invalid_argument("schedule evaluated at negative or NaN time " + std::to_string(t));
  const double end = static_cast<double>(total_);
  return node_->at(t < end ? t : end);
}

void Schedule::throw_negative_step(int64_t step) {
  throw std::invalid_argument("schedule evaluated at negative step " + std::to_string(step));
}

}  // namespace lrkit::schedules
