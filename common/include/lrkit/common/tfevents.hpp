// TensorBoard event files (events.out.tfevents.*, what PyTorch's SummaryWriter, Hugging Face's Trainer and Lightning's
// default logger write): where a log directory keeps them, and their events one by one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "lrkit/common/protobuf_wire.hpp"
#include "lrkit/common/tfrecord_reader.hpp"

namespace lrkit {

// Whether the file is an event file: it begins with a whole TFRecord header, whatever its name.
bool is_tfevents_file(const std::string& path);

// The event files directly in `directory`, sorted by name, which sorts a writer's files by the time in their names,
// as TensorBoard reads them: every events.out.tfevents.* file, and other names holding "tfevents" whose content is
// an event file's.
std::vector<std::string> tfevents_files_in(const std::string& directory);

// A directory of event files (a run, as TensorBoard reads them) and its files (tfevents_files_in).
struct TfEventsRun {
  std::string path;
  std::vector<std::string> files;
};

// The directories below `directory`, at any depth, that hold event files (TensorBoard's runs below a log
// directory), in the order of their paths: runs/ddp/rank_0 and its add_scalars runs below it, then runs/ddp/rank_1.
std::vector<TfEventsRun> tfevents_runs_below(const std::string& directory);

// A Summary value of an event: its tag, and its scalar or why it is none, worked out when asked (a reader of one tag
// among many decodes no other tag's value). It refers to its event's bytes and its reader's path: valid until the
// reader's next event.
class SummaryValue {
 public:
  // `path` and `offset`: the file and the event's byte, which name a malformed value in an error.
  SummaryValue(const WireField& value, const std::string& path, uint64_t offset);
  std::string_view tag() const { return tag_; }
  // Its scalar in `value`: a simple_value, or a tensor of one float32 or float64 (float_val, double_val or
  // tensor_content). "" for a scalar, else why it is none ("text", "a tensor of 3 values", ...). Throws
  // EventFileError where its bytes are no Summary value.
  std::string scalar(double& value) const;

 private:
  WireField value_;
  const std::string* path_;
  uint64_t offset_;
  std::string_view tag_;
  // add_scalar's value, a simple_value and nothing else, kept from the constructor's pass over the fields.
  bool simple_only_ = false;
  uint64_t simple_bits_ = 0;
};

// An event as a reader gives it: its step and wall time, whether it is a SessionLog START (what
// SummaryWriter(purge_step=s) writes at s), and its Summary values.
struct TfEvent {
  int64_t step = 0;
  double wall_time = 0.0;
  bool session_start = false;
  std::vector<SummaryValue> values;
};

// Reads one event file's events in order, up to the size it had when opened (a writer may still be appending). A file
// that ends inside a record ends there. Throws EventFileError naming the file and the byte: a damaged record, or a
// record that is no event.
class TfEventReader {
 public:
  explicit TfEventReader(const std::string& path);
  // The next event into `event` (its values refer to the reader's copy of the record), false after the last.
  bool next(TfEvent& event);
  // Where the event that next() returned last begins.
  uint64_t event_offset() const { return records_.record_offset(); }

 private:
  std::string path_;
  TfRecordReader records_;
  std::string record_;
};

}  // namespace lrkit
