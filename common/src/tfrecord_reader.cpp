#include "lrkit/common/tfrecord_reader.hpp"

#include <algorithm>
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

bool TfRecordReader::readable(size_t bytes) {
  if (filled_ - at_ >= bytes) return true;
  std::copy(buffer_.begin() + static_cast<std::ptrdiff_t>(at_), buffer_.begin() + static_cast<std::ptrdiff_t>(filled_),
            buffer_.begin());  // the bytes not yet read to the front
  filled_ -= at_;
  at_ = 0;
  constexpr size_t kChunkBytes = size_t{1} << 20;
  buffer_.resize(std::max(bytes, kChunkBytes));
  const uint64_t unread = size_ - (offset_ + filled_);  // of the file as it was opened
  const auto want = static_cast<std::streamsize>(std::min<uint64_t>(buffer_.size() - filled_, unread));
  in_.read(buffer_.data() + filled_, want);
  filled_ += static_cast<size_t>(in_.gcount());
  return filled_ - at_ >= bytes;
}

bool TfRecordReader::next(std::string& data) {
  // Read up to the size the file had when opened: a writer may still be appending.
  if (cut_ || offset_ == size_) return false;
  const auto damaged = [&](const std::string& what) {
    return EventFileError("'" + path_ + "': the record at byte " + std::to_string(offset_) + " is damaged (" + what +
                          ")");
  };
  if (size_ - offset_ < kHeaderBytes) return cut_ = true, false;
  if (!readable(kHeaderBytes)) throw damaged("it cannot be read");
  const auto* header = reinterpret_cast<const unsigned char*>(buffer_.data() + at_);
  if (masked_crc32c(header, 8) != little_endian_32(header + 8))
    throw damaged("the checksum of its length does not match: not an event file, or a damaged one");
  const uint64_t length = little_endian(header, 8);
  if (length > size_ - offset_ - kHeaderBytes || size_ - offset_ - kHeaderBytes - length < kFooterBytes)
    return cut_ = true, false;
  const size_t record = kHeaderBytes + static_cast<size_t>(length) + kFooterBytes;
  if (!readable(record)) throw damaged("it cannot be read");
  const auto* bytes = reinterpret_cast<const unsigned char*>(buffer_.data() + at_ + kHeaderBytes);
  if (masked_crc32c(bytes, static_cast<size_t>(length)) != little_endian_32(bytes + length))
    throw damaged("the checksum of its " + std::to_string(length) + " bytes of data does not match");
  data.assign(reinterpret_cast<const char*>(bytes), static_cast<size_t>(length));
  record_offset_ = offset_;
  offset_ += record;
  at_ += record;
  return true;
}

}  // namespace lrkit
