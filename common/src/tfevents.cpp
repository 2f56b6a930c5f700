#include "lrkit/common/tfevents.hpp"

#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <utility>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/numbers.hpp"

namespace lrkit {

namespace {

// Field numbers of TensorBoard's protos (tensorboard/compat/proto: event.proto, summary.proto, tensor.proto,
// tensor_shape.proto).
namespace field {
constexpr uint64_t kEventWallTime = 1, kEventStep = 2, kEventSummary = 5, kEventSessionLog = 7;
constexpr uint64_t kSessionLogStatus = 1, kSessionStart = 1;
constexpr uint64_t kSummaryValue = 1;
constexpr uint64_t kValueTag = 1, kValueSimple = 2, kValueHistogramOld = 3, kValueAudio = 6, kValueTensor = 8;
constexpr uint64_t kTensorDtype = 1, kTensorShape = 2, kTensorContent = 4, kTensorFloats = 5, kTensorDoubles = 6;
constexpr uint64_t kShapeDim = 2, kShapeUnknownRank = 3, kDimSize = 1;
constexpr uint64_t kFloat32 = 1, kFloat64 = 2, kString = 7;
}  // namespace field

double float_from_bits(uint64_t bits) {
  const auto narrow = static_cast<uint32_t>(bits);
  float x = 0.0f;
  std::memcpy(&x, &narrow, sizeof x);
  return x;
}

double double_from_bits(uint64_t bits) {
  double x = 0.0;
  std::memcpy(&x, &bits, sizeof x);
  return x;
}

double real_from_bits(uint64_t bits, size_t width) {
  return width == 4 ? float_from_bits(bits) : double_from_bits(bits);
}

// The first value of a repeated float or double field, packed (one length-delimited field) or not (one field per
// value); none in an empty packed field.
std::optional<double> first_real(const WireField& f, size_t width) {
  if (f.type == (width == 4 ? kFixed32 : kFixed64)) return real_from_bits(f.bits, width);
  if (f.type != kBytes || f.size % width != 0) throw WireMalformed("a tensor's values have the wrong size");
  if (f.size == 0) return std::nullopt;
  return real_from_bits(little_endian(f.bytes, width), width);
}

// A tensor's one value, or why it is no scalar (its value is then left alone).
std::string tensor_scalar(const WireField& tensor, double& value) {
  uint64_t dtype = 0;
  double elements = 1.0;  // no shape: a rank-0 tensor
  const unsigned char* content = nullptr;
  size_t content_size = 0;
  std::optional<double> real;  // the first of float_val or double_val
  WireReader fields(tensor);
  for (WireField f; fields.next(f);) {
    if (f.number == field::kTensorDtype && f.type == kVarint) dtype = f.bits;
    if (f.number == field::kTensorContent && f.type == kBytes) content = f.bytes, content_size = f.size;
    if (f.number == field::kTensorFloats || f.number == field::kTensorDoubles) {
      const auto first = first_real(f, f.number == field::kTensorFloats ? 4 : 8);
      if (!real) real = first;
    }
    if (f.number == field::kTensorShape && f.type == kBytes) {
      WireReader dims(f);
      for (WireField d; dims.next(d);) {
        if (d.number == field::kShapeUnknownRank && d.type == kVarint && d.bits != 0) elements = -1.0;
        if (d.number != field::kShapeDim || d.type != kBytes) continue;
        double size = 0.0;  // a dimension without a size has size 0
        WireReader dim(d);
        for (WireField s; dim.next(s);)
          if (s.number == field::kDimSize && s.type == kVarint)
            size = static_cast<double>(static_cast<int64_t>(s.bits));
        elements *= size;
      }
    }
  }
  if (dtype == field::kString) return "text";
  if (dtype != field::kFloat32 && dtype != field::kFloat64)
    return "a tensor of dtype " + std::to_string(dtype) + " (a scalar is a float32 or a float64)";
  if (elements < 0.0) return "a tensor of unknown shape";
  if (elements != 1.0) return "a tensor of " + format_number(elements) + " values";
  const size_t width = dtype == field::kFloat32 ? 4 : 8;
  if (content_size == width) {
    value = real_from_bits(little_endian(content, width), width);
    return "";
  }
  if (content_size != 0) return "a tensor of " + std::to_string(content_size) + " bytes";
  if (!real) return "a tensor without a value";
  value = *real;  // one value stands for every element
  return "";
}

// A writer's own name for its file (events.out.tfevents.TIME.HOST..., TensorBoard's and PyTorch's), or another name
// with "tfevents" in it on a file whose content is one (make_tfevents.py beside event files is none).
bool is_event_file_in_directory(const std::string& name, const std::string& path) {
  if (path_kind(path) != PathKind::kFile) return false;
  if (name.rfind("events.out.tfevents.", 0) == 0) return true;
  return name.find("tfevents") != std::string::npos && begins_with_tfrecord(path);
}

// A record's bytes that are no event, named by file and byte.
EventFileError not_an_event(const std::string& path, uint64_t offset, const WireMalformed& e) {
  return EventFileError("'" + path + "': the event at byte " + std::to_string(offset) +
                        " is not a TensorBoard event (" + e.what() + ")");
}

}  // namespace

bool is_tfevents_file(const std::string& path) { return begins_with_tfrecord(path); }

std::vector<std::string> tfevents_files_in(const std::string& directory) {
  std::vector<std::string> files;
  for (const std::string& name : directory_names(directory)) {
    const std::string path = (std::filesystem::path(directory) / name).string();
    if (is_event_file_in_directory(name, path)) files.push_back(path);
  }
  return files;
}

namespace {

// The directories below `directory` that hold event files, at any depth, as TensorBoard finds its runs: in the order
// of their paths, each directory once however many links reach it (a link back up is not followed round).
void add_runs_below(const std::string& directory, size_t depth, std::set<std::pair<uint64_t, uint64_t>>& seen,
                    std::vector<TfEventsRun>& runs) {
  constexpr size_t kDeepest = 32;  // below it a tree is no log directory (and a walk must end)
  if (depth > kDeepest) return;
  for (const std::string& name : directory_names(directory)) {
    const std::string path = (std::filesystem::path(directory) / name).string();
    const auto identity = directory_identity(path);
    if (!identity || !seen.insert(*identity).second) continue;
    if (auto files = tfevents_files_in(path); !files.empty()) runs.push_back({path, std::move(files)});
    add_runs_below(path, depth + 1, seen, runs);
  }
}

}  // namespace

std::vector<TfEventsRun> tfevents_runs_below(const std::string& directory) {
  std::set<std::pair<uint64_t, uint64_t>> seen;
  if (const auto identity = directory_identity(directory)) seen.insert(*identity);
  std::vector<TfEventsRun> runs;
  add_runs_below(directory, 1, seen, runs);
  return runs;
}

SummaryValue::SummaryValue(const WireField& value, const std::string& path, uint64_t offset)
    : value_(value), path_(&path), offset_(offset) {
  bool simple = false, other = false;  // a simple_value; another value field (a tensor, a histogram, ...)
  WireReader fields(value);
  for (WireField f; fields.next(f);) {
    if (f.number == field::kValueTag && f.type == kBytes) tag_ = f.text();
    if (f.number == field::kValueSimple && f.type == kFixed32) simple = true, simple_bits_ = f.bits;
    other = other || (f.number >= field::kValueHistogramOld && f.number <= field::kValueAudio) ||
            f.number == field::kValueTensor;
  }
  simple_only_ = simple && !other;
}

std::string SummaryValue::scalar(double& value) const {
  if (simple_only_) {
    value = float_from_bits(simple_bits_);
    return "";
  }
  std::string why = "no value (neither a simple_value nor a tensor)";
  try {
    WireReader fields(value_);
    for (WireField f; fields.next(f);) {
      if (f.number == field::kValueSimple && f.type == kFixed32) value = float_from_bits(f.bits), why.clear();
      if (f.number == field::kValueTensor && f.type == kBytes) why = tensor_scalar(f, value);
      if (f.number >= field::kValueHistogramOld && f.number <= field::kValueAudio)
        why = "a histogram, an image or audio";
    }
  } catch (const WireMalformed& e) {
    throw not_an_event(*path_, offset_, e);
  }
  return why;
}

TfEventReader::TfEventReader(const std::string& path) : path_(path), records_(path) {}

bool TfEventReader::next(TfEvent& event) {
  if (!records_.next(record_)) return false;
  event.step = 0;
  event.wall_time = 0.0;
  event.session_start = false;
  event.values.clear();
  try {
    // One pass: the values are the event's step's wherever the event holds its step.
    const auto* data = reinterpret_cast<const unsigned char*>(record_.data());
    WireReader fields(data, record_.size());
    for (WireField f; fields.next(f);) {
      if (f.number == field::kEventStep && f.type == kVarint) event.step = static_cast<int64_t>(f.bits);
      if (f.number == field::kEventWallTime && f.type == kFixed64) event.wall_time = double_from_bits(f.bits);
      if (f.number == field::kEventSessionLog && f.type == kBytes) {
        WireReader log(f);
        for (WireField s; log.next(s);)
          if (s.number == field::kSessionLogStatus && s.type == kVarint && s.bits == field::kSessionStart)
            event.session_start = true;
      }
      if (f.number != field::kEventSummary || f.type != kBytes) continue;
      WireReader values(f);
      for (WireField v; values.next(v);)
        if (v.number == field::kSummaryValue && v.type == kBytes)
          event.values.emplace_back(v, path_, records_.record_offset());
    }
  } catch (const WireMalformed& e) {
    throw not_an_event(path_, records_.record_offset(), e);
  }
  return true;
}

}  // namespace lrkit
