// Small numeric helpers shared by every lrkit library: pi, the splitmix64
// mixer behind every derived seed, and strict parsing of numbers and
// comma-separated lists from configuration text.
#pragma once

#include <cmath>
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

// The whole of `text` as a finite number, or nothing (empty, trailing characters, out of range).
inline std::optional<double> parse_number(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
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
