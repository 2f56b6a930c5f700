// Schedule: an immutable learning-rate schedule, a pure function of the update
// index t = 0..T (ALGORITHMS.md section 0). Built from a spec string by
// parse_schedule (factory.hpp); copying is cheap (shared immutable node).
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace lrkit::schedules {

// A schedule with no natural end (step, exponential, ...) and no total given.
inline constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();

// Cycle: several restarts lumped together (not monotone).
enum class PhaseKind { Warmup, Stable, Decay, Ramp, Cycle, Table };
const char* phase_kind_name(PhaseKind kind);

// One stretch [begin, end) of a schedule with a single character.
struct Phase {
  int64_t begin = 0;
  int64_t end = 0;
  PhaseKind kind = PhaseKind::Stable;
  bool jumps_at_begin = false;  // the value is discontinuous at `begin`
};

// The implementation interface. Nodes evaluate in continuous time t in
// [0, total()] (callers clamp) so continuity can be checked between steps.
class ScheduleNode {
 public:
  explicit ScheduleNode(int64_t total) : total_(total) {}
  virtual ~ScheduleNode() = default;
  ScheduleNode(const ScheduleNode&) = delete;
  ScheduleNode& operator=(const ScheduleNode&) = delete;

  virtual double at(double t) const = 0;
  virtual std::vector<Phase> phases() const = 0;
  // Steps at which a budgeted run would save its decayed checkpoints (WSD-S).
  virtual std::vector<int64_t> checkpoints() const { return {}; }
  // The momentum a family cycles against its rate between `base` and `max`, as PyTorch's OneCycleLR and CyclicLR do
  // (cycle_momentum); nullopt for a family that cycles none. `t` is in [0, total()] as for at().
  virtual std::optional<double> momentum_at(double /*t*/, double /*base*/, double /*max*/) const {
    return std::nullopt;
  }

  int64_t total() const { return total_; }
  const std::string& spec() const { return spec_; }
  void set_spec(std::string spec) { spec_ = std::move(spec); }

 private:
  int64_t total_;
  std::string spec_;
};

using NodePtr = std::shared_ptr<const ScheduleNode>;

// Whether a momentum may cycle from `base` to `max` (Schedule::cycled_momentum): 0 <= base <= max < 1, as SGD's
// momentum and Adam's beta1 take it. The callers refuse anything else in their own words.
inline bool is_momentum_range(double base, double max) { return 0.0 <= base && base <= max && max < 1.0; }

class Schedule {
 public:
  explicit Schedule(NodePtr node);

  // Learning rate for update `step` (>= 0); steps past total() give the end value.
  double operator()(int64_t step) const {
    if (step < 0) throw_negative_step(step);
    return node_->at(static_cast<double>(step < total_ ? step : total_));
  }
  // The same in continuous time, for plots and continuity checks.
  double at(double t) const;

  int64_t total() const { return total_; }
  bool bounded() const { return total_ != kUnbounded; }
  // The canonical spec; parse_schedule(to_spec(), total()) rebuilds this schedule.
  std::string to_spec() const { return node_->spec(); }
  std::vector<Phase> phases() const { return node_->phases(); }
  std::vector<int64_t> checkpoints() const { return node_->checkpoints(); }
  // The momentum (SGD's, or Adam's beta1) of update `step` where the schedule cycles it against the rate as PyTorch's
  // OneCycleLR and CyclicLR do with cycle_momentum: `max` where the rate is lowest, `base` at its peak. onecycle and
  // triangular cycle it (a warmup in front holds the cycle's first value); any other schedule gives nullopt.
  std::optional<double> cycled_momentum(int64_t step, double base, double max) const {
    if (step < 0) throw_negative_step(step);
    return node_->momentum_at(static_cast<double>(step < total_ ? step : total_), base, max);
  }
  const NodePtr& node() const { return node_; }

 private:
  [[noreturn]] static void throw_negative_step(int64_t step);

  NodePtr node_;
  int64_t total_;
};

}  // namespace lrkit::schedules
