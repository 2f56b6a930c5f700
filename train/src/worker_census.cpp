#include "lrkit/train/worker_census.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "lrkit/distributed/device_identity.hpp"

namespace lrkit::train {

int WorkerCensus::workers_on_machine_of(int rank) const {
  return static_cast<int>(std::count(machines.begin(), machines.end(), machines.at(static_cast<size_t>(rank))));
}

double WorkerCensus::job_peak_flops() const {
  std::map<int64_t, int64_t> peak_of;
  for (size_t r = 0; r < devices.size(); ++r) {
    if (peaks[r] <= 0) return 0.0;  // one device of unknown peak: the job's is unknown
    peak_of[devices[r]] = peaks[r];
  }
  double total = 0.0;
  for (const auto& [device, peak] : peak_of) total += static_cast<double>(peak);
  return total;
}

WorkerCensus take_worker_census(distributed::Collective& collective, const std::string& machine, const std::string& device,
                                double device_peak) {
  // Whole FLOP/s: a peak is far below 2^63 and far above 1, so rounding loses nothing that MFU shows.
  const auto peak = static_cast<int64_t>(std::llround(std::max(0.0, device_peak)));
  WorkerCensus census;
  for (const auto& row : distributed::gather_rows(
           collective, {distributed::identity_hash(machine), distributed::identity_hash(device), peak})) {
    census.machines.push_back(row[0]);
    census.devices.push_back(row[1]);
    census.peaks.push_back(row[2]);
  }
  return census;
}

}  // namespace lrkit::train
