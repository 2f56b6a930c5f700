// The records of a TFRecord file (what TensorBoard's event files are): each is a little-endian 64-bit length, the
// masked CRC-32C of those 8 bytes, the data, and the masked CRC-32C of the data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit {

// What is wrong with a TensorBoard event file or a record or event in it, naming the file (and the byte).
class EventFileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// TFRecord's masking of the CRC-32C of `size` bytes.
uint32_t masked_crc32c(const unsigned char* data, size_t size);

// Whether the file begins with a whole TFRecord header: 12 bytes whose last 4 are the masked checksum of the first 8.
// A text or HDF5 file passes by chance once in 2^32.
bool begins_with_tfrecord(const std::string& path);

// Reads the records one by one, a chunk of the file at a time. A record the file ends inside (a writer killed
// mid-write, or one still writing) ends the records: those before it are whole. A checksum that does not match throws
// EventFileError naming the file and the record's byte offset.
class TfRecordReader {
 public:
  explicit TfRecordReader(const std::string& path);
  // The next record's data, false after the last whole record.
  bool next(std::string& data);
  // Where the record that next() returned last begins.
  uint64_t record_offset() const { return record_offset_; }

 private:
  // Whether `bytes` bytes from offset_ on are in buffer_ (from at_), reading on where they are not yet.
  bool readable(size_t bytes);

  std::string path_;
  std::ifstream in_;
  uint64_t offset_ = 0, record_offset_ = 0, size_ = 0;
  bool cut_ = false;  // the file ended inside a record: nothing more to read
  std::vector<char> buffer_;
  size_t at_ = 0, filled_ = 0;  // offset_'s byte in buffer_, and the end of the bytes read into it
};

}  // namespace lrkit
