// Unsigned numbers stored least significant byte first: how TFRecords store their lengths and checksums, W&B's run
// logs theirs, and protobuf its fixed-width numbers.
#pragma once

#include <cstddef>
#include <cstdint>

namespace lrkit {

// The number in `bytes` (at most 8) bytes at `p`.
inline uint64_t little_endian(const unsigned char* p, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= uint64_t{p[i]} << (8 * i);
  return value;
}
inline uint32_t little_endian_32(const unsigned char* p) { return static_cast<uint32_t>(little_endian(p, 4)); }

}  // namespace lrkit
