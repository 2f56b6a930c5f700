#include "lrkit/train/job_peak.hpp"

#include <torch/torch.h>

#include <algorithm>
#include <map>

#include "lrkit/distributed/device_identity.hpp"

namespace lrkit::train {

double job_peak_flops(distributed::Collective& collective, const std::string& device_identity, double device_peak) {
  const auto devices = distributed::gather_identities(collective, device_identity);
  const auto mine = torch::tensor({std::max(0.0, device_peak)}, torch::kDouble);
  const auto peaks = collective.all_gather(mine.to(collective.device())).to(torch::kCPU).contiguous().reshape({-1});
  std::map<int64_t, double> peak_of;
  for (size_t r = 0; r < devices.size(); ++r) {
    const double peak = peaks[static_cast<int64_t>(r)].item<double>();
    if (peak <= 0) return 0.0;  // one device of unknown peak: the job's is unknown
    peak_of[devices[r]] = peak;
  }
  double total = 0.0;
  for (const auto& [device, peak] : peak_of) total += peak;
  return total;
}

}  // namespace lrkit::train
