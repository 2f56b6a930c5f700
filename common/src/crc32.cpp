#include "lrkit/common/crc32.hpp"

#include <array>

#include "lrkit/common/little_endian.hpp"

namespace lrkit {

namespace {

// Eight tables, one per byte of an 8-byte block (slicing by 8): a long log's checksums cost little beside reading it.
using CrcTables = std::array<std::array<uint32_t, 256>, 8>;

// `polynomial` reflected, as both CRCs take their bytes least significant bit first.
CrcTables make_crc_tables(uint32_t polynomial) {
  CrcTables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ (polynomial & (0u - (crc & 1u)));
    t[0][i] = crc;
  }
  for (size_t k = 1; k < 8; ++k)
    for (uint32_t i = 0; i < 256; ++i) t[k][i] = (t[k - 1][i] >> 8) ^ t[0][t[k - 1][i] & 0xFFu];
  return t;
}

uint32_t crc_of(const CrcTables& t, const unsigned char* data, size_t size, uint32_t previous) {
  uint32_t crc = ~previous;
  for (; size >= 8; size -= 8, data += 8) {
    const uint32_t low = crc ^ little_endian_32(data), high = little_endian_32(data + 4);
    crc = t[7][low & 0xFFu] ^ t[6][(low >> 8) & 0xFFu] ^ t[5][(low >> 16) & 0xFFu] ^ t[4][low >> 24] ^
          t[3][high & 0xFFu] ^ t[2][(high >> 8) & 0xFFu] ^ t[1][(high >> 16) & 0xFFu] ^ t[0][high >> 24];
  }
  for (; size > 0; --size, ++data) crc = (crc >> 8) ^ t[0][(crc ^ *data) & 0xFFu];
  return ~crc;
}

}  // namespace

uint32_t crc32c(const unsigned char* data, size_t size) {
  static const CrcTables tables = make_crc_tables(0x82F63B78u);
  return crc_of(tables, data, size, 0);
}

uint32_t crc32_ieee(const unsigned char* data, size_t size, uint32_t previous) {
  static const CrcTables tables = make_crc_tables(0xEDB88320u);
  return crc_of(tables, data, size, previous);
}

}  // namespace lrkit
