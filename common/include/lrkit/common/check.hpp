// The one way lrkit's validating factories and configs refuse a value: a
// std::invalid_argument whose message names the key and the value (DESIGN.md
// "Factories validate up front").
#pragma once

#include <stdexcept>
#include <string>

namespace lrkit {

inline void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

}  // namespace lrkit
