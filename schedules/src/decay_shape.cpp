#include "lrkit/schedules/decay_shape.hpp"

#include <cmath>

#include "lrkit/common/numbers.hpp"

namespace lrkit::schedules {

namespace {
}

const char* decay_shape_name(DecayShape shape) {
  switch (shape) {
    case DecayShape::Linear: return "linear";
    case DecayShape::Cosine: return "cosine";
    case DecayShape::OneMinusSqrt: return "1-sqrt";
    case DecayShape::Square: return "square";
    case DecayShape::Exp: return "exp";
    case DecayShape::Inverse: return "inverse";
    case DecayShape::Polynomial: return "polynomial";
    case DecayShape::Geometric: return "geometric";
  }
  return "?";
}

const std::vector<std::string>& decay_shape_names() {
  static const std::vector<std::string> names = {"linear", "cosine",  "1-sqrt",     "square",
                                                 "exp",    "inverse", "polynomial", "geometric"};
  return names;
}

std::optional<DecayShape> decay_shape_from_name(const std::string& name) {
  for (int i = 0; i <= static_cast<int>(DecayShape::Geometric); ++i) {
    const auto shape = static_cast<DecayShape>(i);
    if (name == decay_shape_name(shape)) return shape;
  }
  return std::nullopt;
}

bool decay_shape_needs_positive_floor(DecayShape shape) {
  return shape == DecayShape::Inverse || shape == DecayShape::Geometric;
}

double decay_value(DecayShape shape, double s, double peak, double floor, double power) {
  switch (shape) {
    case DecayShape::Inverse: return peak / (1.0 + (peak / floor - 1.0) * s);
    case DecayShape::Geometric: return peak * std::pow(floor / peak, s);
    default: break;
  }
  double g = 0.0;
  switch (shape) {
    case DecayShape::Linear: g = 1.0 - s; break;
    case DecayShape::Cosine: g = 0.5 * (1.0 + std::cos(kPi * s)); break;
    case DecayShape::OneMinusSqrt: g = 1.0 - std::sqrt(s); break;
    case DecayShape::Square: g = 1.0 - s * s; break;
    case DecayShape::Exp: g = 2.0 * std::pow(0.5, s) - 1.0; break;
    case DecayShape::Polynomial: g = std::pow(1.0 - s, power); break;
    default: break;
  }
  return floor + (peak - floor) * g;
}

}  // namespace lrkit::schedules
