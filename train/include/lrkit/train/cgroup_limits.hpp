// What a control group allows its processes, read the way Go's runtime and the
// JVM read it: the smallest limit from the process's cgroup up to the hierarchy's
// root, in cgroup v2 and v1.
// - CPU bandwidth (`docker run --cpus=2`, a Kubernetes CPU limit, systemd's
//   CPUQuota): the affinity mask still lists every CPU there, so threads sized
//   for the mask are throttled by the kernel in turn (measured: the quickstart
//   model under a 1-CPU quota ran 2.2-3.3x slower with 2 threads than with 1).
//   v2 cpu.max; v1 cpu.cfs_quota_us over cpu.cfs_period_us.
// - Memory (`docker run --memory=4g`, a Kubernetes memory limit, SLURM's
//   --mem): /proc/meminfo shows the whole machine there, but the kernel kills a
//   process of the group that needs more. v2 memory.max; v1 memory.limit_in_bytes.
#pragma once

#include <optional>
#include <string>

namespace lrkit::train {

// The CPU limit in CPUs (quota over period, e.g. 1.5), or nullopt where there is none or it cannot be read.
// `cgroup_text` is /proc/self/cgroup's text and `mountinfo_text` /proc/self/mountinfo's: their paths name the
// files read, so tests can point them at a tree of their own.
std::optional<double> cgroup_cpu_limit(const std::string& cgroup_text, const std::string& mountinfo_text);
// The same for this process.
std::optional<double> cgroup_cpu_limit();

// The memory limit in bytes, or nullopt where there is none or it cannot be read; arguments as above.
std::optional<double> cgroup_memory_limit(const std::string& cgroup_text, const std::string& mountinfo_text);
// The same for this process.
std::optional<double> cgroup_memory_limit();

}  // namespace lrkit::train
