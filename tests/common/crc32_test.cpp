// The two CRC-32s of the logs lrkit reads, against their standard check values (the CRC of "123456789") and, for the
// slicing by 8, against the byte-wise definition over every length and alignment.
#include "lrkit/common/crc32.hpp"

#include <gtest/gtest.h>

#include <string>

namespace lrkit {
namespace {

TEST(Crc32, EachIsItsStandardsCheckValue) {
  const std::string check = "123456789";
  const auto* p = reinterpret_cast<const unsigned char*>(check.data());
  EXPECT_EQ(crc32c(p, check.size()), 0xE3069283u) << "CRC-32C (Castagnoli)";
  EXPECT_EQ(crc32_ieee(p, check.size()), 0xCBF43926u) << "zlib's";
  EXPECT_EQ(crc32_ieee(p + 4, 5, crc32_ieee(p, 4)), 0xCBF43926u) << "taken in two pieces";
}

TEST(Crc32, TheSlicingBy8AgreesWithTheByteWiseLoop) {
  std::string bytes;
  for (int i = 0; i < 300; ++i) bytes.push_back(static_cast<char>((i * 37 + 11) & 0xFF));
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  const auto bytewise = [&](uint32_t polynomial, size_t start, size_t size) {
    uint32_t crc = 0xFFFFFFFFu;
    for (size_t i = 0; i < size; ++i) {
      crc ^= p[start + i];
      for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (polynomial & (0u - (crc & 1u)));
    }
    return crc ^ 0xFFFFFFFFu;
  };
  for (size_t start = 0; start < 9; ++start)
    for (size_t size = 0; start + size <= bytes.size(); size += 7) {
      ASSERT_EQ(crc32c(p + start, size), bytewise(0x82F63B78u, start, size)) << start << " " << size;
      ASSERT_EQ(crc32_ieee(p + start, size), bytewise(0xEDB88320u, start, size)) << start << " " << size;
    }
}

}  // namespace
}  // namespace lrkit
