// Where each worker of a job trains, gathered once at start-up: its machine
// and its device. Neither the world size nor the launcher's counts can tell
// how many workers share a machine's cores, or which devices the job's MFU
// divides by: Gloo workers may share a GPU, machines may hold different
// numbers of workers, and a launcher that sets RANK and WORLD_SIZE alone
// (Kubeflow's PyTorchJob) does not say how many a machine holds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::train {

struct WorkerCensus {
  // Rank r's at r: its machine's and its device's identity hashes (distributed::identity_hash), and its device's
  // peak FLOP/s (0: unknown).
  std::vector<int64_t> machines, devices, peaks;

  // How many workers share rank `rank`'s machine, itself included.
  int workers_on_machine_of(int rank) const;
  // The distinct devices' summed peak FLOP/s, 0 where any rank's is unknown.
  double job_peak_flops() const;
};

// Every rank passes its machine (distributed::host_name()), its device (distributed::device_identity) and that
// device's peak FLOP/s; every rank gets the whole census. One all-gather: every rank of `collective` must call it.
WorkerCensus take_worker_census(distributed::Collective& collective, const std::string& machine, const std::string& device,
                                double device_peak);

}  // namespace lrkit::train
