#include "nodes.hpp"

#include <algorithm>
#include <cmath>

#include "lrkit/common/numbers.hpp"
#include <stdexcept>

namespace lrkit::schedules::detail {

namespace {

int64_t add_total(int64_t a, int64_t b) { return (a == kUnbounded || b == kUnbounded) ? kUnbounded : a + b; }
}  // namespace

WarmupNode::WarmupNode(int64_t length, double init, WarmupShape shape, NodePtr inner, bool prefix)
    : ScheduleNode(prefix ? add_total(length, inner->total()) : inner->total()),
      length_(length),
      init_(init),
      target_(inner->at(0.0)),
      shape_(shape),
      inner_(std::move(inner)),
      prefix_(prefix) {}

double WarmupNode::at(double t) const {
  const double w = static_cast<double>(length_);
  if (t >= w) return at_clamped(*inner_, inner_time(t));
  const double p = t / w;
  switch (shape_) {
    case WarmupShape::Linear: return init_ + (target_ - init_) * p;
    case WarmupShape::Cosine: return init_ + (target_ - init_) * 0.5 * (1.0 - std::cos(kPi * p));
    case WarmupShape::Exp: return init_ * std::pow(target_ / init_, p);
    case WarmupShape::OneMinusSqrt: return init_ + (target_ - init_) * (1.0 - std::sqrt(1.0 - p));
  }
  return target_;
}

// Not a prefix, the ramp covers the inner phases' first steps; the schedule may jump where the ramp, which ends at
// the schedule's first value, hands over to its value at `length`.
std::vector<Phase> WarmupNode::phases() const {
  std::vector<Phase> out;
  if (length_ > 0) out.push_back({0, length_, PhaseKind::Warmup, false});
  for (Phase p : inner_->phases()) {
    if (prefix_) {
      p.begin = add_total(p.begin, length_);
      p.end = add_total(p.end, length_);
    } else if (p.end <= length_) {
      continue;
    } else if (p.begin <= length_) {
      p.begin = length_;
      p.jumps_at_begin = at_clamped(*inner_, static_cast<double>(length_)) != target_;
    }
    out.push_back(p);
  }
  return out;
}

// The warmup holds the momentum of the schedule's first step, where its rate is lowest.
std::optional<double> WarmupNode::momentum_at(double t, double base, double max) const {
  const double after = t < static_cast<double>(length_) ? 0.0 : inner_time(t);
  const double end = static_cast<double>(inner_->total());
  return inner_->momentum_at(after < end ? after : end, base, max);
}

std::vector<int64_t> WarmupNode::checkpoints() const {
  std::vector<int64_t> out;
  for (const int64_t c : inner_->checkpoints())
    if (prefix_ || c >= length_) out.push_back(prefix_ ? c + length_ : c);
  return out;
}

JoinNode::JoinNode(std::vector<NodePtr> pieces, std::vector<int64_t> starts, int64_t total,
                   std::vector<int64_t> checkpoints)
    : ScheduleNode(total), pieces_(std::move(pieces)), starts_(std::move(starts)),
      checkpoints_(std::move(checkpoints)) {
  if (pieces_.empty() || pieces_.size() != starts_.size() || starts_[0] != 0)
    throw std::logic_error("JoinNode: pieces and starts disagree");
}

double JoinNode::at(double t) const {
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), t,
                                   [](double v, int64_t s) { return v < static_cast<double>(s); });
  const size_t i = static_cast<size_t>(it - starts_.begin()) - 1;
  return at_clamped(*pieces_[i], t - static_cast<double>(starts_[i]));
}

std::vector<Phase> JoinNode::phases() const {
  std::vector<Phase> out;
  for (size_t i = 0; i < pieces_.size(); ++i) {
    const int64_t start = starts_[i];
    const int64_t end = i + 1 < pieces_.size() ? starts_[i + 1] : total();
    bool first = true;
    for (Phase p : pieces_[i]->phases()) {
      p.begin = add_total(p.begin, start);
      p.end = std::min(add_total(p.end, start), end);
      if (p.begin >= end) break;
      if (first && i > 0) {
        const double before = at_clamped(*pieces_[i - 1], static_cast<double>(start - starts_[i - 1]));
        const double after = pieces_[i]->at(0.0);
        const double scale = std::max({std::fabs(before), std::fabs(after), 1e-300});
        p.jumps_at_begin = p.jumps_at_begin || std::fabs(before - after) > 1e-12 * scale;
      }
      first = false;
      out.push_back(p);
    }
  }
  return out;
}

TableNode::TableNode(std::vector<double> steps, std::vector<double> values)
    : ScheduleNode(static_cast<int64_t>(steps.back())), steps_(std::move(steps)), values_(std::move(values)) {
  unit_spaced_ = true;
  for (size_t i = 0; i < steps_.size() && unit_spaced_; ++i) unit_spaced_ = steps_[i] == static_cast<double>(i);
}

double TableNode::at(double t) const {
  if (t <= steps_.front()) return values_.front();
  if (t >= steps_.back()) return values_.back();
  size_t i = 0;
  if (unit_spaced_) {
    i = static_cast<size_t>(t);
  } else {
    i = static_cast<size_t>(std::upper_bound(steps_.begin(), steps_.end(), t) - steps_.begin()) - 1;
  }
  const double f = (t - steps_[i]) / (steps_[i + 1] - steps_[i]);
  return f == 0.0 ? values_[i] : values_[i] + (values_[i + 1] - values_[i]) * f;
}

}  // namespace lrkit::schedules::detail

