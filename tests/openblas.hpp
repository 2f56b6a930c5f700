// Whether this test process multiplies through OpenBLAS (Debian's LibTorch does, through libblas.so.3;
// PyTorch's wheels use MKL): lrkit's executables link the same LibTorch, so they have it where the tests do.
#pragma once

#include <dlfcn.h>

#include <string>

namespace lrkit::testing {

inline bool process_has_openblas() { return ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads") != nullptr; }

// What a run's start line ("threads per worker: ...") and its log's /start say of a worker with `intra_op`
// intra-op threads and a share of `share` cores: OpenBLAS's count only where there is OpenBLAS.
inline std::string worker_threads_text(int intra_op, int share) {
  return std::to_string(intra_op) + " intra-op" + (process_has_openblas() ? ", " + std::to_string(share) + " OpenBLAS" : "");
}

}  // namespace lrkit::testing
