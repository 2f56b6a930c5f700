// Traces a window of training steps with LibTorch's profiler: every operator
// the host dispatches (forward, autograd's backward threads, the optimizer),
// the trainer's phases (its `lrkit.*` annotations) and, where LibTorch has
// Kineto with CUPTI and the run is on a GPU, every kernel, copy and memset the
// device ran. The file is Chrome's trace-event JSON (Perfetto and
// chrome://tracing open it; bench/trace_summary.py tabulates it against a
// PyTorch loop's). lrkit writes it from the profiler's events itself: LibTorch
// 1.13 without Kineto collects the events but its ProfilerResult::save writes
// nothing, so this is the one writer that works under both generations.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <optional>
#include <string>

namespace lrkit::train {

struct TraceWritten {
  std::string path;
  int64_t first_step = 0, last_step = 0;  // the traced updates, 1-based (a resumed run may start inside the window)
  size_t host_events = 0;
  size_t device_events = 0;  // 0 on the CPU, and where LibTorch records no kernels
};

class StepProfiler {
 public:
  // Traces updates first .. first + count - 1 (0-based); count 0 traces nothing.
  StepProfiler(int64_t first, int64_t count, const torch::Device& device, std::string path, std::string device_name);
  StepProfiler(const StepProfiler&) = delete;
  StepProfiler& operator=(const StepProfiler&) = delete;
  ~StepProfiler();  // stops a trace that an exception cut short; nothing is written then

  void before_step(int64_t step);
  // After the window's last update: stops the profiler and writes the trace (atomically: a kill leaves the
  // old file or none); throws std::runtime_error naming the file when it cannot be written.
  std::optional<TraceWritten> after_step(int64_t step);

 private:
  int64_t first_, count_;
  bool cuda_;
  std::string path_, device_name_;
  bool active_ = false;
  int64_t traced_from_ = 0;  // a resumed run may start inside the window
};

}  // namespace lrkit::train
