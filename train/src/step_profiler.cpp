#include "lrkit/train/step_profiler.hpp"

#include <torch/csrc/autograd/profiler_kineto.h>
#include <torch/version.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <limits>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "lrkit/common/text_file.hpp"

namespace lrkit::train {

namespace {

namespace profiler = torch::autograd::profiler;
namespace impl = torch::profiler::impl;

// LibTorch 2.x times events in nanoseconds (startNs), 1.13 in microseconds (startUs).
template <typename Event>
auto start_ns(const Event& e, int) -> decltype(e.startNs()) { return e.startNs(); }
template <typename Event>
uint64_t start_ns(const Event& e, long) { return e.startUs() * 1000; }
template <typename Event>
auto duration_ns(const Event& e, int) -> decltype(e.durationNs()) { return e.durationNs(); }
template <typename Event>
uint64_t duration_ns(const Event& e, long) { return e.durationUs() * 1000; }

// Kineto's activity types, named as its own traces name them (the first twelve are the same in every version).
std::string category(uint8_t activity) {
  static const char* const names[] = {"cpu_op",         "user_annotation", "gpu_user_annotation", "gpu_memcpy",
                                      "gpu_memset",     "kernel",          "external_correlation", "cuda_runtime",
                                      "cuda_driver",    "cpu_instant_event", "python_function",    "overhead"};
  return activity < std::size(names) ? names[activity] : "other";
}

void append_json_string(std::string& out, const std::string& text) {
  out += '"';
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += ch;
    }
  }
  out += '"';
}

std::string microseconds(uint64_t ns) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", static_cast<double>(ns) / 1000.0);
  return text;
}

}  // namespace

StepProfiler::StepProfiler(int64_t first, int64_t count, const torch::Device& device, std::string path, std::string device_name)
    : first_(first), count_(count), cuda_(device.is_cuda()), path_(std::move(path)), device_name_(std::move(device_name)) {}

StepProfiler::~StepProfiler() {
  if (!active_) return;
  try {
    profiler::disableProfiler();
  } catch (...) {  // already unwinding from the error that cut the trace short
  }
}

void StepProfiler::before_step(int64_t step) {
  if (active_ || count_ == 0 || step < first_ || step >= first_ + count_) return;
  std::set<impl::ActivityType> activities{impl::ActivityType::CPU};
  if (cuda_) activities.insert(impl::ActivityType::CUDA);  // kernels where LibTorch has Kineto with CUPTI
  const impl::ProfilerConfig config(impl::ProfilerState::KINETO);
  profiler::prepareProfiler(config, activities);
  profiler::enableProfiler(config, activities);
  active_ = true;
  traced_from_ = step;
}

std::optional<TraceWritten> StepProfiler::after_step(int64_t step) {
  if (!active_ || step != first_ + count_ - 1) return std::nullopt;
  if (cuda_) torch::cuda::synchronize();  // the window's last kernels are in the trace
  active_ = false;
  const auto result = profiler::disableProfiler();
  const auto& events = result->events();

  uint64_t origin = std::numeric_limits<uint64_t>::max();
  for (const auto& e : events) origin = std::min<uint64_t>(origin, start_ns(e, 0));
  TraceWritten written{path_, traced_from_ + 1, step + 1, 0, 0};
  std::string body;
  body.reserve(events.size() * 120);
  for (const auto& e : events) {
    const bool host = e.deviceType() == c10::DeviceType::CPU;
    (host ? written.host_events : written.device_events)++;
    body += body.empty() ? "\n" : ",\n";
    body += R"({"ph":"X","cat":")" + category(e.activityType()) + R"(","name":)";
    append_json_string(body, e.name());
    if (host)
      body += R"(,"pid":"host","tid":)" + std::to_string(e.startThreadId());
    else
      body += R"(,"pid":")" + c10::Device(e.deviceType(), static_cast<c10::DeviceIndex>(e.deviceIndex())).str() +
              R"(","tid":)" + std::to_string(e.deviceResourceId());
    body += R"(,"ts":)" + microseconds(start_ns(e, 0) - origin) + R"(,"dur":)" + microseconds(duration_ns(e, 0)) + "}";
  }
  std::string text = R"({"lrkit":{"format":"lrkit-trace 1","first_step":)" + std::to_string(written.first_step) +
                     R"(,"steps":)" + std::to_string(written.last_step - written.first_step + 1) + R"(,"device":)";
  append_json_string(text, device_name_);
  text += R"(,"libtorch":")" + std::string(TORCH_VERSION) + R"(","host_events":)" + std::to_string(written.host_events) +
          R"(,"device_events":)" + std::to_string(written.device_events) + R"(},"displayTimeUnit":"ms","traceEvents":[)" +
          body + "\n]}\n";
  write_text_atomically(path_, text);
  return written;
}

}  // namespace lrkit::train
