// The `lrkit` commands that need LibTorch (train, sweep, log) run in lrkit-torch, the executable beside `lrkit`:
// loading LibTorch costs a process 0.4 s and 160 MB, which `lrkit schedule`, `diagnose` and `refine` no longer pay.
// `lrkit` becomes lrkit-torch for them (exec): the process keeps its pid, arguments, environment and open files, so
// run-directory locks, stop signals and a launcher's workers see one process, as before the split.
#pragma once

namespace lrkit::cli {

// Replaces this process with lrkit-torch, given `lrkit`'s own argv; returns only where it cannot, with the exit code
// after saying why in one line: 2 in a build without LibTorch, 1 where lrkit-torch is missing beside `lrkit`.
int run_in_torch_binary(char** argv);

}  // namespace lrkit::cli
