// Protocol buffers' wire format, read without the protobuf library: the fields of a message in order, each checked
// to lie within it. TensorBoard's events and Weights & Biases' run records are read with it (their field numbers
// transcribed where they are read).
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include "lrkit/common/little_endian.hpp"

namespace lrkit {

constexpr uint64_t kVarint = 0, kFixed64 = 1, kBytes = 2, kFixed32 = 5;

// Bytes that are no message: the reader of a file turns it into an error naming the file and the record.
struct WireMalformed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// One field of a message in its wire form.
struct WireField {
  uint64_t number = 0, type = 0;
  uint64_t bits = 0;                     // a varint's value, or a fixed32's or fixed64's bits
  const unsigned char* bytes = nullptr;  // a length-delimited field's bytes
  size_t size = 0;

  std::string_view text() const { return {reinterpret_cast<const char*>(bytes), size}; }
};

// The fields of a message, in order. Throws WireMalformed where one runs past the message's end or has a wire type
// that no current message uses (the groups of proto2).
class WireReader {
 public:
  WireReader(const unsigned char* data, size_t size) : p_(data), end_(data + size) {}
  explicit WireReader(const WireField& f) : WireReader(f.bytes, f.size) {}

  bool next(WireField& f) {
    if (p_ == end_) return false;
    const uint64_t key = varint();
    f.number = key >> 3;
    f.type = key & 7u;
    if (f.number == 0) throw WireMalformed("a field numbered 0");
    switch (f.type) {
      case kVarint: f.bits = varint(); break;
      case kFixed64: f.bits = fixed(8); break;
      case kFixed32: f.bits = fixed(4); break;
      case kBytes: {
        const uint64_t size = varint();
        if (size > static_cast<uint64_t>(end_ - p_))
          throw WireMalformed("field " + std::to_string(f.number) + " runs past the end of its message");
        f.bytes = p_;
        f.size = static_cast<size_t>(size);
        p_ += size;
        break;
      }
      default: throw WireMalformed("field " + std::to_string(f.number) + " has wire type " + std::to_string(f.type));
    }
    return true;
  }

 private:
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (p_ == end_) throw WireMalformed("a number runs past the end of its message");
      const unsigned char byte = *p_++;
      value |= uint64_t{byte & 0x7Fu} << shift;
      if ((byte & 0x80u) == 0) return value;
    }
    throw WireMalformed("a number longer than 10 bytes");
  }
  uint64_t fixed(size_t bytes) {
    if (static_cast<size_t>(end_ - p_) < bytes) throw WireMalformed("a number runs past the end of its message");
    const uint64_t value = little_endian(p_, bytes);
    p_ += bytes;
    return value;
  }

  const unsigned char* p_;
  const unsigned char* end_;
};

}  // namespace lrkit
