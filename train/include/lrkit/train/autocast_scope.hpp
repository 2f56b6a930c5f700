// bf16 autocast of the forward pass on the run's device (CUDA, or CPU where
// LibTorch supports it), restored on scope exit. The autocast C++ API changed
// in LibTorch 2.4 (device-type arguments); both are handled here.
#pragma once

#include <ATen/autocast_mode.h>
#include <torch/torch.h>
#include <torch/version.h>

namespace lrkit::train {

class AutocastScope {
 public:
  AutocastScope(const torch::Device& device, bool enabled) : enabled_(enabled), cuda_(device.is_cuda()) {
    if (!enabled_) return;
    previous_ = is_enabled();
    set_enabled(true);
    set_dtype(at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    set_enabled(previous_);
  }
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::DeviceType type() const { return cuda_ ? at::kCUDA : at::kCPU; }
  bool is_enabled() const { return at::autocast::is_autocast_enabled(type()); }
  void set_enabled(bool on) const { at::autocast::set_autocast_enabled(type(), on); }
  void set_dtype(at::ScalarType dtype) const { at::autocast::set_autocast_dtype(type(), dtype); }
#else
  bool is_enabled() const { return cuda_ ? at::autocast::is_enabled() : at::autocast::is_cpu_enabled(); }
  void set_enabled(bool on) const { cuda_ ? at::autocast::set_enabled(on) : at::autocast::set_cpu_enabled(on); }
  void set_dtype(at::ScalarType dtype) const {
    cuda_ ? at::autocast::set_autocast_gpu_dtype(dtype) : at::autocast::set_autocast_cpu_dtype(dtype);
  }
#endif
  bool enabled_, cuda_;
  bool previous_ = false;
};

}  // namespace lrkit::train
