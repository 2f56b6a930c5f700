// A worker's share of its machine's cores: LibTorch's intra-op threads and
// OpenBLAS's. OpenBLAS (Debian's LibTorch multiplies through it) sizes its pool
// for the whole machine when it loads, so with several workers on one machine
// each ran its matrix products on every core, and OpenBLAS's threads spin while
// they wait, against the other workers (measured with 2 workers on 2 cores: each
// worker's OpenBLAS thread took 40 % of a core from its main thread, and runs
// fell at random into a mode 20 % slower). PyTorch's CUDA wheels use MKL, which
// follows the intra-op count, so there is nothing more to set there. The cores are
// those the process may run on, not the machine's (std::thread::hardware_concurrency
// ignores taskset, a container's cpuset, a batch system's binding and a CPU quota).
#pragma once

#include <cstdint>
#include <string>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::train {

struct WorkerThreads {
  int intra_op = 1;
  int openblas = 0;                        // OpenBLAS's threads from now on; 0: this process has no OpenBLAS
  bool openblas_from_environment = false;  // OPENBLAS_NUM_THREADS chose them, not lrkit
};

// The CPUs this process may run on: its affinity mask (taskset, a container's cpuset, a batch system's
// binding), as `nproc` counts them, the machine's count where the mask cannot be read; at most its control
// group's CPU quota, rounded up (cgroup_limits.hpp).
int usable_cpus();

// The cores lrkit's runs may use on this machine: LRKIT_CORES when set (what `lrkit sweep` gives each of the
// runs it trains at once, or a user's limit), else usable_cpus(). Throws std::invalid_argument naming a
// malformed LRKIT_CORES.
int machine_cores();

// One worker's cores, at least 1: machine_cores() over the run's workers on the machine (env.local_world_size),
// except for a worker srun started without LRKIT_CORES, which has SLURM_CPUS_PER_TASK of its own (at most
// usable_cpus()). Throws std::invalid_argument naming a malformed LRKIT_CORES or SLURM_CPUS_PER_TASK.
int cores_per_worker(const distributed::DistributedEnv& env);

// The intra-op threads for train.threads = `threads`: that many, or the worker's share (cores_per_worker) where it
// is 0. Throws std::invalid_argument where `threads` exceeds usable_cpus(): threads beyond the CPUs only take turns
// on them (4,096 on 2 CPUs made the test model's step take 25 s), and where cores_per_worker throws.
int intra_op_threads(int64_t threads, const distributed::DistributedEnv& env);

// Sets the intra-op threads (intra_op_threads) and OpenBLAS's
// (the worker's share, unless OPENBLAS_NUM_THREADS is set: a user's explicit choice stands). OpenBLAS is found
// at run time, so lrkit links no BLAS of its own.
WorkerThreads share_cores(int64_t threads, const distributed::DistributedEnv& env);

// "1 intra-op, 2 OpenBLAS": the run's start line ("threads per worker: ...") and its log's /start attribute.
std::string describe(const WorkerThreads& threads);

}  // namespace lrkit::train
