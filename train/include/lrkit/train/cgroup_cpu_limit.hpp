// The CPU bandwidth a control group allows its processes: `docker run --cpus=2`,
// a Kubernetes CPU limit, systemd's CPUQuota. The affinity mask still lists every
// CPU there, so threads sized for the mask are throttled by the kernel in turn
// (measured: the quickstart model under a 1-CPU quota ran 2.2-3.3x slower with 2
// threads than with 1). Read the way Go's runtime and the JVM read it: the
// smallest limit from the process's cgroup up to the hierarchy's root, in cgroup v2
// (cpu.max) and v1 (cpu.cfs_quota_us over cpu.cfs_period_us).
#pragma once

#include <optional>
#include <string>

namespace lrkit::train {

// The limit in CPUs (quota over period, e.g. 1.5), or nullopt where there is none or it cannot be read.
// `cgroup_text` is /proc/self/cgroup's text and `mountinfo_text` /proc/self/mountinfo's: their paths name the
// files read, so tests can point them at a tree of their own.
std::optional<double> cgroup_cpu_limit(const std::string& cgroup_text, const std::string& mountinfo_text);

// The same for this process.
std::optional<double> cgroup_cpu_limit();

}  // namespace lrkit::train
