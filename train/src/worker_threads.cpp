#include "lrkit/train/worker_threads.hpp"

#include <dlfcn.h>
#include <torch/torch.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

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

}  // namespace

int machine_cores() {
  const char* text = std::getenv("LRKIT_CORES");
  if (text == nullptr || *text == '\0') return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  char* end = nullptr;
  errno = 0;
  const long cores = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || errno != 0 || cores < 1 || cores > 1 << 20)
    throw std::invalid_argument(std::string("environment variable LRKIT_CORES='") + text +
                                "' is not a whole number of cores >= 1");
  return static_cast<int>(cores);
}

int cores_per_worker(int local_workers) { return std::max(1, machine_cores() / std::max(1, local_workers)); }

WorkerThreads share_cores(int64_t threads, int local_workers) {
  WorkerThreads out;
  const int share = cores_per_worker(local_workers);
  out.intra_op = threads > 0 ? static_cast<int>(threads) : share;
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
  std::string text = "threads per worker: " + std::to_string(threads.intra_op) + " intra-op";
  if (threads.openblas > 0)
    text += ", " + std::to_string(threads.openblas) + " OpenBLAS" +
            (threads.openblas_from_environment ? " (OPENBLAS_NUM_THREADS)" : "");
  return text;
}

}  // namespace lrkit::train
