// Protocol buffers' wire form written by hand, for tests that place a record's fields (and its damage) where they
// want them: W&B run logs (wandb_framer.hpp) and TensorBoard event files (tfevents_writer.hpp).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>

namespace lrkit::testing {

inline std::string varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(static_cast<char>((v & 0x7Fu) | 0x80u));
  out.push_back(static_cast<char>(v));
  return out;
}
// A length-delimited field: a string, bytes or a message.
inline std::string field(uint64_t number, const std::string& bytes) {
  return varint(number << 3 | 2) + varint(bytes.size()) + bytes;
}
inline std::string varint_field(uint64_t number, uint64_t value) { return varint(number << 3) + varint(value); }
inline std::string little_endian_bytes(uint64_t bits, size_t bytes) {
  std::string out;
  for (size_t i = 0; i < bytes; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xFFu));
  return out;
}
inline std::string float_field(uint64_t number, float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return varint(number << 3 | 5) + little_endian_bytes(bits, 4);
}
inline std::string double_field(uint64_t number, double value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return varint(number << 3 | 1) + little_endian_bytes(bits, 8);
}

}  // namespace lrkit::testing
