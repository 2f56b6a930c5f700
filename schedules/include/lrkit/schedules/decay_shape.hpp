// Decay shapes from peak to floor over normalized progress s in [0, 1]
// (ALGORITHMS.md section 1), shared by every decaying family and WSD.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lrkit::schedules {

enum class DecayShape { Linear, Cosine, OneMinusSqrt, Square, Exp, Inverse, Polynomial, Geometric };

const char* decay_shape_name(DecayShape shape);
std::optional<DecayShape> decay_shape_from_name(const std::string& name);
const std::vector<std::string>& decay_shape_names();
// inverse and geometric are defined through 1/floor or log(floor): floor > 0.
bool decay_shape_needs_positive_floor(DecayShape shape);

// lr at progress s: floor + (peak - floor) * g(s), or the full inverse /
// geometric forms. `power` is used by Polynomial only.
double decay_value(DecayShape shape, double s, double peak, double floor, double power);

}  // namespace lrkit::schedules
