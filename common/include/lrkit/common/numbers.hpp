// Small numeric helpers shared by every lrkit library: pi, the splitmix64
// mixer behind every derived seed, strict parsing of numbers and
// comma-separated lists from configuration text, and printing numbers exactly.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
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
  // The fewest significant digits that give `value` back: no fewer than the shortest round-trip form's (to_chars), and
  // that many unless printf's correctly rounded ones miss it (next to a power of 2). One printf where a loop from 1
  // digit took up to 17 (the searches of `--compare` and `--fit` write thousands of specs); the same text.
  const auto shortest = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  int digits = 0;
  for (const char* c = buffer; c != shortest.ptr && *c != 'e'; ++c) digits += *c >= '0' && *c <= '9';
  for (int precision = std::max(digits, 1); precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof buffer, "%.*g", precision, value);
    double back = 0.0;
    std::from_chars(buffer, buffer + std::char_traits<char>::length(buffer), back);
    if (back == value) break;
  }
  return buffer;
}

// A size in bytes as free(1) and ls -lh readers compare it: "77.3 GB", "412 MB", "35 kB".
inline std::string bytes_text(double bytes) {
  char buffer[32];
  if (bytes >= 1e9)
    std::snprintf(buffer, sizeof buffer, "%.1f GB", bytes / 1e9);
  else if (bytes >= 1e6)
    std::snprintf(buffer, sizeof buffer, "%.0f MB", bytes / 1e6);
  else
    std::snprintf(buffer, sizeof buffer, "%.0f kB", bytes / 1e3);
  return buffer;
}

// std::from_chars for a double that also takes one leading '+' ("+1e-3", "+inf"), as strtod, Python's float and
// printf's "%+g" write it (from_chars alone refuses the sign). On failure the pointer is `first`, so that "+" and "+-1"
// never read as a number that ends at `last`.
inline std::from_chars_result chars_to_double(const char* first, const char* last, double& out) {
  const bool plus = first != last && *first == '+';
  if (plus && last - first > 1 && first[1] == '-') return {first, std::errc::invalid_argument};  // from_chars takes "-1"
  const auto result = std::from_chars(first + (plus ? 1 : 0), last, out);
  if (result.ec == std::errc::invalid_argument) return {first, result.ec};
  return result;
}

// The whole of `text` as a double by chars_to_double, "nan", "inf" and "-inf" included (as Python's str() and
// printf write them): false where `text` is empty or holds more than the number.
inline bool text_to_double(std::string_view text, double& out) {
  const char* first = text.data();
  const char* last = first + text.size();
  const auto [end, ec] = chars_to_double(first, last, out);
  return ec == std::errc() && end == last && first != last;
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

namespace numbers_detail {

// Whether the decimal `text` ([+-]digits[.digits][e[+-]digits], as parse_number reads it) is a whole number,
// decided on its digits: strtod would round 1.0000000000000001e3 to 1000.
inline bool decimal_is_whole(const std::string& text) {
  const size_t sign = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  const size_t e_at = text.find_first_of("eE");
  const std::string mantissa = text.substr(sign, e_at == std::string::npos ? std::string::npos : e_at - sign);
  long exponent = 0;
  if (e_at != std::string::npos) {
    const char* first = text.data() + e_at + 1;
    const char* last = text.data() + text.size();
    if (first != last && *first == '+') ++first;
    const auto [end, ec] = std::from_chars(first, last, exponent);
    if (first == last || ec != std::errc() || end != last) return false;
    exponent = std::clamp(exponent, -100000L, 100000L);  // past this the value is 0 or too large anyway; -LONG_MIN overflows
  }
  const size_t dot = mantissa.find('.');
  const std::string whole_digits = mantissa.substr(0, dot);
  const std::string fraction_digits = dot == std::string::npos ? "" : mantissa.substr(dot + 1);
  const auto digits_only = [](const std::string& s) { return s.find_first_not_of("0123456789") == std::string::npos; };
  if ((whole_digits.empty() && fraction_digits.empty()) || !digits_only(whole_digits) || !digits_only(fraction_digits))
    return false;
  const auto zeros_from = [](const std::string& s, size_t from) {
    return from >= s.size() || s.find_first_not_of('0', from) == std::string::npos;
  };
  if (exponent >= 0) return zeros_from(fraction_digits, static_cast<size_t>(exponent));  // 2.5e4: "5" moves left
  const size_t shifted = static_cast<size_t>(-exponent);  // 1000e-3: the last three digits must be zeros
  return zeros_from(fraction_digits, 0) &&
         zeros_from(whole_digits, whole_digits.size() > shifted ? whole_digits.size() - shifted : 0);
}

}  // namespace numbers_detail

// The largest magnitude a whole number read from text may have: every whole number up to it is a double exactly.
inline constexpr int64_t kLargestWholeNumber = 9'000'000'000'000'000;

// The whole of `text` as a whole number (|v| <= kLargestWholeNumber), or nothing. Digits with an optional sign, or a
// decimal whose value is exactly whole, as configs write run lengths: 1e4, 2.5e4, 1000.0. Not 1.5, 1e-3, hex, inf or nan
// (decimal_is_whole refuses every character but digits, signs, one point and an exponent).
inline std::optional<int64_t> parse_integer(const std::string& text) {
  if (!numbers_detail::decimal_is_whole(text)) return std::nullopt;
  const auto v = parse_number(text);
  if (!v || std::fabs(*v) > static_cast<double>(kLargestWholeNumber)) return std::nullopt;
  return static_cast<int64_t>(*v);
}

}  // namespace lrkit
