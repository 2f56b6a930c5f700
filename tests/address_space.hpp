// This test process's address space (VmSize), read here rather than through lrkit: what the libraries it links
// take, LibTorch's among them, which a test of an address-space limit on lrkit must leave room for.
#pragma once

#include <fstream>
#include <string>

namespace lrkit::testing {

// In KiB, as /proc/self/status and `ulimit -v` count; -1 where /proc does not say.
inline long address_space_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7));
  return -1;
}

}  // namespace lrkit::testing
