#include "lrkit/train/worker_threads.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <thread>

#include "lrkit/common/numbers.hpp"
#include "lrkit/train/cgroup_limits.hpp"

namespace lrkit::train {

namespace {

// OpenBLAS's own controls, looked up among the libraries already loaded (Debian's libblas.so.3 from
// libopenblas0-pthread brings libopenblas.so.0); null where the BLAS is another one.
template <typename Function>
Function loaded_function(const char* name) {
  void* symbol = ::dlsym(RTLD_DEFAULT, name);
  Function function = nullptr;
  static_assert(sizeof function == sizeof symbol);
  std::memcpy(&function, &symbol, sizeof function);  // object to function pointer, as POSIX allows
  return function;
}

// A whole number >= 1 from the environment variable `name`; nullopt when it is unset or empty.
std::optional<int> cores_from_environment(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  const auto cores = parse_integer(text);
  if (!cores || *cores < 1 || *cores > 1 << 20)
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + text +
                                "' is not a whole number of cores >= 1");
  return static_cast<int>(*cores);
}

// The CPUs of the calling thread's affinity mask. A fixed cpu_set_t holds 1,024 CPUs, and the call fails with
// EINVAL on a kernel configured for more.
int affinity_cpus() {
  for (int capacity = CPU_SETSIZE; capacity <= 1 << 20; capacity *= 2) {
    cpu_set_t* set = CPU_ALLOC(capacity);
    if (set == nullptr) break;
    const size_t bytes = CPU_ALLOC_SIZE(capacity);
    CPU_ZERO_S(bytes, set);
    const bool read = ::sched_getaffinity(0, bytes, set) == 0;
    const int count = read ? CPU_COUNT_S(bytes, set) : 0;
    const int error = errno;
    CPU_FREE(set);
    if (read && count > 0) return count;
    if (read || error != EINVAL) break;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

// train.threads, or the worker's `share` where it is 0; refused above the CPUs.
int threads_or_share(int64_t threads, int share) {
  if (threads == 0) return share;
  const int cpus = usable_cpus();
  if (threads > cpus)
    throw std::invalid_argument("train.threads = " + std::to_string(threads) + " is more than the " + std::to_string(cpus) +
                                " CPU(s) this worker may run on (its affinity mask and CPU quota): the threads beyond "
                                "them only take turns, and every step slows down; use at most " +
                                std::to_string(cpus) + ", or 0 for the worker's share of the cores");
  return static_cast<int>(threads);
}

}  // namespace

int usable_cpus() {
  const int mask = affinity_cpus();
  if (const auto quota = cgroup_cpu_limit()) return std::clamp(static_cast<int>(std::ceil(*quota)), 1, mask);
  return mask;
}

int machine_cores() {
  if (const auto chosen = cores_from_environment("LRKIT_CORES")) return *chosen;
  return usable_cpus();
}

int cores_per_worker(const distributed::DistributedEnv& env) {
  if (env.launcher == "slurm" && !cores_from_environment("LRKIT_CORES"))
    if (const auto task = cores_from_environment("SLURM_CPUS_PER_TASK"))  // each srun task has CPUs of its own
      return std::min(*task, usable_cpus());
  return std::max(1, machine_cores() / std::max(1, env.local_world_size));
}

int intra_op_threads(int64_t threads, const distributed::DistributedEnv& env) {
  return threads_or_share(threads, cores_per_worker(env));
}

WorkerThreads share_cores(int64_t threads, const distributed::DistributedEnv& env) {
  WorkerThreads out;
  const int share = cores_per_worker(env);
  out.intra_op = threads_or_share(threads, share);
  torch::set_num_threads(out.intra_op);
  const auto get = loaded_function<int (*)()>("openblas_get_num_threads");
  const auto set = loaded_function<void (*)(int)>("openblas_set_num_threads");
  if (get == nullptr || set == nullptr) return out;
  const char* chosen = std::getenv("OPENBLAS_NUM_THREADS");
  out.openblas_from_environment = chosen != nullptr && *chosen != '\0';
  if (!out.openblas_from_environment) set(share);
  out.openblas = get();
  return out;
}

std::string describe(const WorkerThreads& threads) {
  std::string text = std::to_string(threads.intra_op) + " intra-op";
  if (threads.openblas > 0)
    text += ", " + std::to_string(threads.openblas) + " OpenBLAS" +
            (threads.openblas_from_environment ? " (OPENBLAS_NUM_THREADS)" : "");
  return text;
}

}  // namespace lrkit::train
