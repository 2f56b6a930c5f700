// The node types every family is assembled from. Families (families/*.cpp)
// choose parameters and compose these; nothing here parses specs.
#pragma once

#include <vector>

#include "lrkit/schedules/decay_shape.hpp"
#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules::detail {

class ConstantNode final : public ScheduleNode {
 public:
  ConstantNode(int64_t total, double value, PhaseKind kind = PhaseKind::Stable)
      : ScheduleNode(total), value_(value), kind_(kind) {}
  double at(double) const override { return value_; }
  std::vector<Phase> phases() const override { return {{0, total(), kind_, false}}; }

 private:
  double value_;
  PhaseKind kind_;
};

// peak -> floor over [0, total] with a decay shape (a ramp when floor > peak).
class ShapeNode final : public ScheduleNode {
 public:
  ShapeNode(int64_t total, double peak, double floor, DecayShape shape, double power)
      : ScheduleNode(total), peak_(peak), floor_(floor), shape_(shape), power_(power),
        inv_total_(1.0 / static_cast<double>(total)) {}
  double at(double t) const override { return decay_value(shape_, t * inv_total_, peak_, floor_, power_); }
  std::vector<Phase> phases() const override {
    return {{0, total(), floor_ <= peak_ ? PhaseKind::Decay : PhaseKind::Ramp, false}};
  }

 private:
  double peak_, floor_;
  DecayShape shape_;
  double power_, inv_total_;
};

enum class WarmupShape { Linear, Cosine, Exp, OneMinusSqrt };

// A ramp from `init` over `length` steps to wherever `inner` starts; then `inner` shifted by `length` (a prefix), or
// `inner` from its own step `length` on (not a prefix: the ramp takes the place of its first steps, timm's
// warmup_prefix=False).
class WarmupNode final : public ScheduleNode {
 public:
  WarmupNode(int64_t length, double init, WarmupShape shape, NodePtr inner, bool prefix = true);
  double at(double t) const override;
  std::vector<Phase> phases() const override;
  std::vector<int64_t> checkpoints() const override;
  std::optional<double> momentum_at(double t, double base, double max) const override;

 private:
  // Where `inner` is at step t >= length_.
  double inner_time(double t) const { return prefix_ ? t - static_cast<double>(length_) : t; }

  int64_t length_;
  double init_, target_;
  WarmupShape shape_;
  NodePtr inner_;
  bool prefix_;
};

// Pieces laid end to end; piece i sees time relative to its start (optax join).
class JoinNode final : public ScheduleNode {
 public:
  // starts[0] == 0, strictly increasing; total is where the last piece ends.
  JoinNode(std::vector<NodePtr> pieces, std::vector<int64_t> starts, int64_t total,
           std::vector<int64_t> checkpoints = {});
  double at(double t) const override;
  std::vector<Phase> phases() const override;
  std::vector<int64_t> checkpoints() const override { return checkpoints_; }

 private:
  std::vector<NodePtr> pieces_;
  std::vector<int64_t> starts_;
  std::vector<int64_t> checkpoints_;
};

// Piecewise-linear interpolation through (step, value) points.
class TableNode final : public ScheduleNode {
 public:
  TableNode(std::vector<double> steps, std::vector<double> values);
  double at(double t) const override;
  std::vector<Phase> phases() const override { return {{0, total(), PhaseKind::Table, false}}; }

 private:
  std::vector<double> steps_, values_;
  bool unit_spaced_;  // steps are 0, 1, 2, ...: index directly
};

class FloorNode final : public ScheduleNode {
 public:
  FloorNode(NodePtr inner, double minimum)
      : ScheduleNode(inner->total()), inner_(std::move(inner)), minimum_(minimum) {}
  double at(double t) const override {
    const double v = inner_->at(t);
    return v < minimum_ ? minimum_ : v;
  }
  std::vector<Phase> phases() const override { return inner_->phases(); }
  std::vector<int64_t> checkpoints() const override { return inner_->checkpoints(); }

 private:
  NodePtr inner_;
  double minimum_;
};

class ScaleNode final : public ScheduleNode {
 public:
  ScaleNode(NodePtr inner, double factor)
      : ScheduleNode(inner->total()), inner_(std::move(inner)), factor_(factor) {}
  double at(double t) const override { return factor_ * inner_->at(t); }
  std::vector<Phase> phases() const override { return inner_->phases(); }
  std::vector<int64_t> checkpoints() const override { return inner_->checkpoints(); }

 private:
  NodePtr inner_;
  double factor_;
};

// Evaluates `node` at t clamped into [0, node.total()].
inline double at_clamped(const ScheduleNode& node, double t) {
  const double end = static_cast<double>(node.total());
  return node.at(t < end ? t : end);
}

}  // namespace lrkit::schedules::detail
