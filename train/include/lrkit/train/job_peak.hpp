// The peak FLOP/s a job trains with, the denominator of its MFU: each device
// that its ranks train on counted once. Neither the world size nor the workers
// per machine can tell it: Gloo workers may share a GPU, machines may hold
// different numbers of workers, and a launcher that sets RANK and WORLD_SIZE
// alone (Kubeflow's PyTorchJob) does not say how many a machine holds.
#pragma once

#include <string>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::train {

// Every rank passes the device it trains on (distributed::device_identity) and that device's peak FLOP/s (0:
// unknown); every rank gets the sum of the distinct devices' peaks, or 0 where any rank's peak is unknown. One
// all-gather: every rank of `collective` must call it.
double job_peak_flops(distributed::Collective& collective, const std::string& device_identity, double device_peak);

}  // namespace lrkit::train
