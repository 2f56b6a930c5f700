// Where a job's workers train, gathered over a real group (threads as ranks) on
// each device: the MFU denominator (the peaks of the distinct devices) and the
// workers that share a machine's cores.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_param.hpp"
#include "thread_ranks.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "lrkit/train/worker_census.hpp"

namespace lrkit::train {
namespace {

using lrkit::testing::OnDevice;

// Rank r on machines[r] reports devices[r] with peaks[r]; the census each rank gets back.
std::vector<WorkerCensus> censuses(const std::vector<std::string>& machines, const std::vector<std::string>& devices,
                                   const std::vector<double>& peaks, const torch::Device& device) {
  return lrkit::testing::on_thread_ranks<WorkerCensus>(
      static_cast<int>(devices.size()),
      [&](size_t r, distributed::Collective& group) { return take_worker_census(group, machines[r], devices[r], peaks[r]); },
      device);
}

// The job's peak as each rank computes it, rank r training on devices[r] (all on one machine).
std::vector<double> job_peaks(const std::vector<std::string>& devices, const std::vector<double>& peaks,
                              const torch::Device& device) {
  std::vector<double> out;
  for (const auto& census : censuses(std::vector<std::string>(devices.size(), "m"), devices, peaks, device))
    out.push_back(census.job_peak_flops());
  return out;
}

class WorkerCensusOnDevice : public OnDevice {};

TEST_P(WorkerCensusOnDevice, CountsEachDeviceOnceHoweverManyWorkersShareIt) {
  // Four Gloo workers on one GPU train with one GPU's peak.
  EXPECT_EQ(job_peaks({"gpu:a", "gpu:a", "gpu:a", "gpu:a"}, {989.4e12, 989.4e12, 989.4e12, 989.4e12}, device()),
            std::vector<double>(4, 989.4e12));
  // Machines with different numbers of workers: three on one, one on another, two machines' peaks.
  EXPECT_EQ(job_peaks({"cpu:n1", "cpu:n1", "cpu:n1", "cpu:n2"}, {2e12, 2e12, 2e12, 2e12}, device()),
            std::vector<double>(4, 4e12));
  // One worker per pod (Kubeflow): every pod's GPU counts.
  EXPECT_EQ(job_peaks({"gpu:a", "gpu:b", "gpu:c"}, {756e12, 756e12, 756e12}, device()), std::vector<double>(3, 2268e12));
}

TEST_P(WorkerCensusOnDevice, AddsTheKnownPeaksOfDifferentGpusAndIsUnknownWhereOneIsUnknown) {
  EXPECT_EQ(job_peaks({"gpu:h100", "gpu:a100"}, {989.4e12, 312e12}, device()), std::vector<double>(2, 1301.4e12));
  EXPECT_EQ(job_peaks({"gpu:h100", "gpu:other"}, {989.4e12, 0.0}, device()), std::vector<double>(2, 0.0));
}

TEST_P(WorkerCensusOnDevice, OneProcessTrainsWithItsDevicesPeak) {
  const auto single = distributed::make_single_process_collective(device());
  const auto peak = [&](double device_peak) {
    return take_worker_census(*single, distributed::host_name(), distributed::device_identity(device()), device_peak)
        .job_peak_flops();
  };
  EXPECT_EQ(peak(989.4e12), 989.4e12);
  EXPECT_EQ(peak(0.0), 0.0);
}

// Each rank counts the workers on its machine, whatever the devices: 3 on one, 1 on another (RANK and WORLD_SIZE
// alone tell neither).
TEST_P(WorkerCensusOnDevice, EachRankCountsTheWorkersOnItsMachine) {
  const auto all = censuses({"n1", "n1", "n2", "n1"}, {"gpu:a", "gpu:b", "gpu:c", "gpu:a"}, {1, 1, 1, 1}, device());
  for (const auto& census : all) {
    EXPECT_EQ(census.workers_on_machine_of(0), 3);
    EXPECT_EQ(census.workers_on_machine_of(2), 1);
    EXPECT_EQ(census.job_peak_flops(), 3.0);
  }
}

LRKIT_ON_DEVICES(WorkerCensusOnDevice);

}  // namespace
}  // namespace lrkit::train
