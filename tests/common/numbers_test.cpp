// common/numbers.hpp: printing numbers exactly and parsing them strictly.
#include "lrkit/common/numbers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <string>

namespace lrkit {
namespace {

TEST(FormatNumber, ShortestFormThatParsesBack) {
  for (double v : {0.0, 1.0, 3e-4, 0.1, 1.0 / 3.0, 12500.0, 1e-7, 1e-17, 6.02e23, 2.5e-310, -7.25, -1e-9}) {
    const std::string text = format_number(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    EXPECT_EQ(parse_number(text), v) << text;
  }
  EXPECT_EQ(format_number(3e-4), "0.0003");
  EXPECT_EQ(format_number(20), "20");
  EXPECT_EQ(format_number(0.2), "0.2");
  EXPECT_EQ(format_number(1e-7), "1e-07");   // std::to_string: 0.000000
  EXPECT_EQ(format_number(-1e-9), "-1e-09");  // std::to_string: -0.000000
  EXPECT_EQ(format_number(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_number(-std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(format_number(std::numeric_limits<double>::quiet_NaN()), "nan");
}

// The text is printf's "%.{p}g" with the fewest digits p that parse back, whatever the value: random bit patterns
// (every magnitude, subnormals), numbers of few digits, and next to powers of 2, where the shortest round-trip digits
// and printf's correctly rounded ones can differ.
TEST(FormatNumber, FewestPrintfDigitsThatParseBack) {
  const auto fewest_digits = [](double v) {
    char text[40];
    for (int digits = 1; digits <= 17; ++digits) {
      std::snprintf(text, sizeof text, "%.*g", digits, v);
      if (std::strtod(text, nullptr) == v) break;
    }
    return std::string(text);
  };
  std::mt19937_64 bits(5);
  std::uniform_int_distribution<int> few(1, 99999), exponent(-30, 30);
  for (int i = 0; i < 20000; ++i) {
    double v = 0.0;
    const uint64_t pattern = bits();
    std::memcpy(&v, &pattern, sizeof v);
    const double plain = few(bits) * std::pow(10.0, exponent(bits));
    const double power_of_2 = std::nextafter(std::ldexp(1.0, exponent(bits) * 30), 0.0);
    for (const double x : {v, plain, power_of_2}) {
      if (!std::isfinite(x) || (x == std::floor(x) && std::fabs(x) < 1e15)) continue;  // whole: "%.0f"
      ASSERT_EQ(format_number(x), fewest_digits(x));
    }
  }
}

TEST(ParseNumber, TheWholeTextAndFiniteOnly) {
  EXPECT_EQ(parse_number("3e-4"), 3e-4);
  EXPECT_EQ(parse_number(" 1"), 1.0);  // std::stod skips leading blanks; config values arrive trimmed
  EXPECT_FALSE(parse_number("1x"));
  EXPECT_FALSE(parse_number(""));
  EXPECT_FALSE(parse_number("inf"));
  EXPECT_FALSE(parse_number("nan"));
  EXPECT_FALSE(parse_number("1e999"));
  EXPECT_FALSE(parse_number("1e-999"));  // it would be 0
  EXPECT_EQ(parse_number("2.5e-310"), 2.5e-310);
}

// The text's numbers as strtod, Python and printf("%+g") write them: from_chars alone refuses "+1e-3".
TEST(CharsToDouble, SignedNumbersAndInfinity) {
  const auto read = [](const std::string& text) -> std::optional<double> {
    double out = -1;
    const auto [end, ec] = chars_to_double(text.data(), text.data() + text.size(), out);
    if (ec != std::errc()) {
      EXPECT_EQ(end, text.data()) << text;  // so "+" never reads as a number that ends at the text's end
      return std::nullopt;
    }
    return end == text.data() + text.size() ? std::optional<double>(out) : std::nullopt;
  };
  EXPECT_EQ(read("+1e-3"), 1e-3);
  EXPECT_EQ(read("-2.5"), -2.5);
  EXPECT_EQ(read("7"), 7.0);
  EXPECT_EQ(read("+inf"), std::numeric_limits<double>::infinity());
  for (const char* text : {"+", "++1", "+-1", "-+1", "+ 1", "", "+x", "+.", " 1"}) EXPECT_FALSE(read(text)) << text;
}

TEST(TextToDouble, TheWholeTextNonFiniteIncluded) {
  double out = 0.0;
  ASSERT_TRUE(text_to_double("+5e-05", out));
  EXPECT_EQ(out, 5e-05);
  ASSERT_TRUE(text_to_double("nan", out)) << "Python's str(float('nan')), as MLflow writes a diverged metric";
  EXPECT_TRUE(std::isnan(out));
  ASSERT_TRUE(text_to_double("-inf", out));
  EXPECT_EQ(out, -std::numeric_limits<double>::infinity());
  for (const char* text : {"", "1 ", " 1", "1e", "0.5x", "+"}) EXPECT_FALSE(text_to_double(text, out)) << text;
}

TEST(ParseInteger, DigitsOrADecimalThatIsExactlyWhole) {
  EXPECT_EQ(parse_integer("-12"), -12);
  EXPECT_EQ(parse_integer("+7"), 7);
  EXPECT_EQ(parse_integer("1e3"), 1000);
  EXPECT_EQ(parse_integer("1E+3"), 1000);
  EXPECT_EQ(parse_integer("2.5e4"), 25000);
  EXPECT_EQ(parse_integer("1.50e1"), 15);
  EXPECT_EQ(parse_integer("1000.0"), 1000);
  EXPECT_EQ(parse_integer("1000e-3"), 1);
  EXPECT_EQ(parse_integer("-3e2"), -300);
  EXPECT_EQ(parse_integer("0e-5"), 0);
  EXPECT_EQ(parse_integer("9e15"), 9000000000000000);
  for (const char* text : {"1.5", "1e-3", "2.55e1", "1001e-3", "1.0000000000000001e3", "1e16", "0x10", "inf", "nan", "",
                           "e3", "1e", "1e+", "1..0", "1.0.0", "1e3e3", "--1", ".", "1e-99999999999999999999999"})
    EXPECT_FALSE(parse_integer(text)) << text;
}

}  // namespace
}  // namespace lrkit
