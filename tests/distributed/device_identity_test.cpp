// The identity by which ranks tell whether they train on one device: the host
// name for the CPU, the UUID for a GPU (whichever index a process sees it at).
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <string>

#include "device_param.hpp"
#include "lrkit/distributed/device_identity.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::testing::OnDevice;

TEST(DeviceIdentity, TheCpuIsKnownByTheMachinesName) {
  std::array<char, 256> host{};
  ASSERT_EQ(::gethostname(host.data(), host.size() - 1), 0);
  EXPECT_EQ(host_name(), host.data());
  EXPECT_FALSE(host_name().empty());
  EXPECT_EQ(device_identity(torch::kCPU), std::string("cpu:") + host.data());
}

class DeviceIdentityOnDevice : public OnDevice {};

TEST_P(DeviceIdentityOnDevice, IsTheSameForEveryHandleOfOneDeviceAndNamesItsKind) {
  const std::string identity = device_identity(device());
  EXPECT_EQ(identity, device_identity(device()));
  if (!cuda()) return;
  // "gpu:" and the UUID's 16 bytes in hex; GPUs at other indices have other UUIDs.
  ASSERT_EQ(identity.size(), 4u + 32u) << identity;
  EXPECT_EQ(identity.rfind("gpu:", 0), 0u) << identity;
  EXPECT_EQ(identity.find_first_not_of("0123456789abcdef", 4), std::string::npos) << identity;
  for (int index = 1; index < static_cast<int>(torch::cuda::device_count()); ++index)
    EXPECT_NE(device_identity(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(index))), identity);
}

LRKIT_ON_DEVICES(DeviceIdentityOnDevice);

}  // namespace
}  // namespace lrkit::distributed
