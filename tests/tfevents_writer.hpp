// TensorBoard event files written for tests, independently of tests/golden/make_tfevents.py: events in protobuf's
// wire form (the field numbers of TensorBoard's event.proto and summary.proto) framed as TFRecords, so that a test
// places sessions, wall times, tags and damage where it wants them.
#pragma once

#include <cstdint>
#include <string>

#include "lrkit/common/tfrecord_reader.hpp"
#include "wire_writer.hpp"

namespace lrkit::testing {

// The TFRecord framing of `data`: its length, the length's masked CRC-32C, the data, the data's masked CRC-32C.
inline std::string tfrecord(const std::string& data) {
  const std::string length = little_endian_bytes(data.size(), 8);
  const auto masked = [](const std::string& s) {
    return little_endian_bytes(masked_crc32c(reinterpret_cast<const unsigned char*>(s.data()), s.size()), 4);
  };
  return length + masked(length) + data + masked(data);
}

// One writer session's events, as PyTorch's SummaryWriter writes them: the file_version event first, then an event
// per value; each event 0.25 s after the last, from the wall time the session opened at.
class EventFile {
 public:
  // `purge_step`: SummaryWriter(purge_step=...)'s SessionLog START, where >= 0.
  explicit EventFile(double wall_time, int64_t purge_step = -1) : clock_(wall_time) {
    event(0, field(3, "brain.Event:2"));
    if (purge_step >= 0) event(purge_step, field(7, varint_field(1, 1)));
  }
  // add_scalar(tag, value, step): a simple_value.
  EventFile& scalar(const std::string& tag, int64_t step, float value) {
    return event(step, field(5, field(1, field(1, tag) + float_field(2, value))));
  }
  // add_histogram(tag, ...): a value that is no scalar.
  EventFile& histogram(const std::string& tag, int64_t step) {
    return event(step, field(5, field(1, field(1, tag) + field(5, double_field(1, 0.0) + double_field(2, 1.0)))));
  }
  const std::string& bytes() const { return bytes_; }

 private:
  EventFile& event(int64_t step, const std::string& what) {
    clock_ += 0.25;
    bytes_ += tfrecord(double_field(1, clock_) + (step ? varint_field(2, static_cast<uint64_t>(step)) : "") + what);
    return *this;
  }
  double clock_;
  std::string bytes_;
};

}  // namespace lrkit::testing
