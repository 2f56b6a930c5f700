// This test process's address space (VmSize), read here rather than through lrkit: what the libraries it links
// take, LibTorch's among them, which a test of an address-space limit on lrkit must leave room for.
#pragma once

#include <fstream>
#include <stdexcept>
#include <string>

namespace lrkit::testing {

// In KiB, as /proc/self/status and `ulimit -v` count.
inline long address_space_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmSize:", 0) == 0) return std::stol(line.substr(7));
  throw std::runtime_error("no VmSize in /proc/self/status");
}

}  // namespace lrkit::testing
