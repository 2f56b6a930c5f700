// The CPUs this test process may run on (its affinity mask, as `nproc` counts them), read here rather than
// through lrkit: what lrkit divides among its workers. Test machines have fewer than 1,024 CPUs.
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace lrkit::testing {

inline int process_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return CPU_COUNT(&set);
}

}  // namespace lrkit::testing
