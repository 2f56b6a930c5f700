#include "lrkit/distributed/device_identity.hpp"

#ifdef LRKIT_WITH_CUDA
#include <ATen/cuda/CUDAContext.h>
#endif
#include <unistd.h>

#include <array>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "one_gpu_per_worker.hpp"

namespace lrkit::distributed {

std::string host_name() {
  std::array<char, 256> host{};
  if (::gethostname(host.data(), host.size() - 1) != 0) return "";
  return host.data();
}

#ifdef LRKIT_WITH_CUDA
PhysicalGpu physical_gpu(const torch::Device& device) {
  const cudaDeviceProp* properties = at::cuda::getDeviceProperties(device.index());
  std::string uuid;
  for (const char byte : properties->uuid.bytes) {
    std::array<char, 3> hex{};
    std::snprintf(hex.data(), hex.size(), "%02x", static_cast<unsigned>(static_cast<unsigned char>(byte)));
    uuid += hex.data();
  }
  std::array<char, 32> bus{};
  std::snprintf(bus.data(), bus.size(), "%04x:%02x:%02x", properties->pciDomainID, properties->pciBusID,
                properties->pciDeviceID);
  return {uuid, host_name() + " " + bus.data()};
}
#endif

std::string device_identity(const torch::Device& device) {
  if (!device.is_cuda()) return "cpu:" + host_name();
#ifdef LRKIT_WITH_CUDA
  return "gpu:" + physical_gpu(device).uuid;
#else
  throw std::invalid_argument("this lrkit was built without CUDA: no identity for " + device.str());
#endif
}

IdentityHash& IdentityHash::add(const void* bytes, size_t size) {
  const auto* byte = static_cast<const unsigned char*>(bytes);
  for (size_t i = 0; i < size; ++i) {
    hash_ ^= byte[i];
    hash_ *= 1099511628211ULL;
  }
  return *this;
}

int64_t identity_hash(const std::string& identity) { return IdentityHash().add(identity.data(), identity.size()).value(); }

std::vector<std::vector<int64_t>> gather_rows(Collective& collective, const std::vector<int64_t>& row) {
  const auto mine = torch::tensor(row, torch::kLong).to(collective.device());
  const auto gathered = collective.all_gather(mine).to(torch::kCPU).contiguous();  // [world, row]
  const auto table = gathered.accessor<int64_t, 2>();
  std::vector<std::vector<int64_t>> rows(static_cast<size_t>(table.size(0)));
  for (int64_t r = 0; r < table.size(0); ++r)
    for (int64_t k = 0; k < table.size(1); ++k) rows[static_cast<size_t>(r)].push_back(table[r][k]);
  return rows;
}

}  // namespace lrkit::distributed
