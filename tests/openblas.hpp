// Whether this test process multiplies through OpenBLAS (Debian's LibTorch does, through libblas.so.3;
// PyTorch's wheels use MKL): lrkit's executables link the same LibTorch, so they have it where the tests do.
#pragma once

#include <dlfcn.h>

namespace lrkit::testing {

inline bool process_has_openblas() { return ::dlsym(RTLD_DEFAULT, "openblas_set_num_threads") != nullptr; }

}  // namespace lrkit::testing
