// Small numeric helpers shared by every lrkit library: pi, the splitmix64
// mixer behind every derived seed, strict parsing of numbers and
// comma-separated lists from configuration text, and printing numbers exactly.
#pragma once

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace lrkit {

inline constexpr double kPi = 3.14159265358979323846;

// splitmix64's finalizer (Steele et al.): a bijective, well-mixed 64-bit hash.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Decorrelated 64-bit seeds for nearby (seed, stream) pairs.
inline uint64_t derive_seed(uint64_t seed, uint64_t stream) { return splitmix64(seed ^ (stream * 0xd1342543de82ef95ULL)); }

// Comma-separated items, each trimmed of blanks; "" gives one empty item.
inline std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    items.push_back(first == std::string::npos ? "" : item.substr(first, last - first + 1));
  }
  return items;
}

// `value` in the shortest form that parses back to the same double (12500, 0.003, 1e-07), for
// messages, logs and specs alike: std::to_string's six decimals turn 1e-7 into 0.000000. NaN is
// "nan" whatever its sign bit (0/0 and inf-inf give the negative one, which glibc prints "-nan").
inline std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  char buffer[40];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {  // whole numbers: 12500, not 1.25e+04
    std::snprintf(buffer, sizeof buffer, "%.0f", value);
    return buffer;
  }
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    double back = 0.0;
    std::from_chars(buffer, buffer + std::char_traits<char>::length(buffer), back);
    if (back == value) break;
  }
  return buffer;
}

// The whole of `text` as a finite number, or nothing (empty, trailing characters, out of range).
// Subnormal values are kept (format_number prints them), values that underflow to zero are not.
inline std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  const bool underflow_to_zero = errno == ERANGE && v == 0;
  if (end != text.c_str() + text.size() || !std::isfinite(v) || underflow_to_zero) return std::nullopt;
  return v;
}

// The whole of `text` as a whole number (|v| <= 9e15), or nothing.
inline std::optional<int64_t> parse_integer(const std::string& text) {
  if (text.empty() || text.find_first_not_of("+-0123456789") != std::string::npos) return std::nullopt;
  const auto v = parse_number(text);
  if (!v || std::fabs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace lrkit
