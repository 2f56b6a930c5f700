#include "lrkit/common/tfrecord_reader.hpp"

#include <array>

#include "lrkit/common/crc32.hpp"
#include "lrkit/common/file_status.hpp"
#include "lrkit/common/little_endian.hpp"

namespace lrkit {

namespace {

constexpr size_t kHeaderBytes = 12, kFooterBytes = 4;

}  // namespace

uint32_t masked_crc32c(const unsigned char* data, size_t size) {
  const uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + 0xA282EAD8u;
}

bool begins_with_tfrecord(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, kHeaderBytes> header{};
  if (!in.read(reinterpret_cast<char*>(header.data()), header.size())) return false;
  return masked_crc32c(header.data(), 8) == little_endian_32(header.data() + 8);
}

TfRecordReader::TfRecordReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
  const auto size = file_size_of(path);
  if (!in_ || !size) throw EventFileError("cannot open '" + path + "': no such file or not readable");
  size_ = *size;
}

bool TfRecordReader::next(std::string& data) {
  // Read up to the size the file had when opened: a writer may still be appending.
  if (cut_ || offset_ == size_) return false;
  const auto damaged = [&](const std::string& what) {
    return EventFileError("'" + path_ + "': the record at byte " + std::to_string(offset_) + " is damaged (" + what +
                           ")");
  };
  if (size_ - offset_ < kHeaderBytes) return cut_ = true, false;
  std::array<unsigned char, kHeaderBytes> header{};
  in_.read(reinterpret_cast<char*>(header.data()), header.size());
  if (!in_) throw damaged("it cannot be read");
  if (masked_crc32c(header.data(), 8) != little_endian_32(header.data() + 8))
    throw damaged("the checksum of its length does not match: not an event file, or a damaged one");
  const uint64_t length = little_endian(header.data(), 8);
  if (length > size_ - offset_ - kHeaderBytes || size_ - offset_ - kHeaderBytes - length < kFooterBytes)
    return cut_ = true, false;
  data.resize(static_cast<size_t>(length));
  std::array<unsigned char, kFooterBytes> footer{};
  in_.read(data.data(), static_cast<std::streamsize>(length));
  in_.read(reinterpret_cast<char*>(footer.data()), footer.size());
  if (!in_) throw damaged("it cannot be read");
  const auto* bytes = reinterpret_cast<const unsigned char*>(data.data());
  if (masked_crc32c(bytes, data.size()) != little_endian_32(footer.data()))
    throw damaged("the checksum of its " + std::to_string(length) + " bytes of data does not match");
  record_offset_ = offset_;
  offset_ += kHeaderBytes + length + kFooterBytes;
  return true;
}

}  // namespace lrkit
