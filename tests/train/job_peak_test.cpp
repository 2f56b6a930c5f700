// The MFU denominator: the peaks of the distinct devices a job's ranks train
// on, gathered over a real group (threads as ranks), on each device.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "device_param.hpp"
#include "thread_ranks.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "lrkit/train/job_peak.hpp"

namespace lrkit::train {
namespace {

using lrkit::testing::OnDevice;

// Rank r reports identities[r] with peaks[r]; what each rank gets back.
std::vector<double> job_peaks(const std::vector<std::string>& identities, const std::vector<double>& peaks,
                              const torch::Device& device) {
  return lrkit::testing::on_thread_ranks<double>(
      static_cast<int>(identities.size()),
      [&](size_t r, distributed::Collective& group) { return job_peak_flops(group, identities[r], peaks[r]); }, device);
}

class JobPeak : public OnDevice {};

TEST_P(JobPeak, CountsEachDeviceOnceHoweverManyWorkersShareIt) {
  // Four Gloo workers on one GPU train with one GPU's peak.
  EXPECT_EQ(job_peaks({"gpu:a", "gpu:a", "gpu:a", "gpu:a"}, {989.4e12, 989.4e12, 989.4e12, 989.4e12}, device()),
            std::vector<double>(4, 989.4e12));
  // Machines with different numbers of workers: three on one, one on another, two machines' peaks.
  EXPECT_EQ(job_peaks({"cpu:n1", "cpu:n1", "cpu:n1", "cpu:n2"}, {2e12, 2e12, 2e12, 2e12}, device()),
            std::vector<double>(4, 4e12));
  // One worker per pod (Kubeflow): every pod's GPU counts.
  EXPECT_EQ(job_peaks({"gpu:a", "gpu:b", "gpu:c"}, {756e12, 756e12, 756e12}, device()), std::vector<double>(3, 2268e12));
}

TEST_P(JobPeak, AddsTheKnownPeaksOfDifferentGpusAndIsUnknownWhereOneIsUnknown) {
  EXPECT_EQ(job_peaks({"gpu:h100", "gpu:a100"}, {989.4e12, 312e12}, device()), std::vector<double>(2, 1301.4e12));
  EXPECT_EQ(job_peaks({"gpu:h100", "gpu:other"}, {989.4e12, 0.0}, device()), std::vector<double>(2, 0.0));
}

TEST_P(JobPeak, OneProcessTrainsWithItsDevicesPeak) {
  const auto single = distributed::make_single_process_collective(device());
  EXPECT_EQ(job_peak_flops(*single, distributed::device_identity(device()), 989.4e12), 989.4e12);
  EXPECT_EQ(job_peak_flops(*single, distributed::device_identity(device()), 0.0), 0.0);
}

LRKIT_ON_DEVICES(JobPeak);

}  // namespace
}  // namespace lrkit::train
