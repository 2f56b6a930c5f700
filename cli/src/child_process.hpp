// Starting `lrkit train` as a child of this same executable (the local
// launcher's workers, a sweep's runs) and reading how it ended; a child's
// end when its parent dies.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>
#include <vector>

namespace lrkit::cli {

// fork + exec of /proc/self/exe as `lrkit train ARGS...`; `in_child` runs in
// the child first (environment, redirections). The child gets SIGTERM when
// this process dies (PR_SET_PDEATHSIG). Throws std::runtime_error
// naming `what` when fork fails; a child that cannot exec exits 127.
pid_t start_lrkit_train(const std::vector<std::string>& args, const std::function<void()>& in_child, const std::string& what);

// From now on the death of `parent` (SIGKILL, the OOM killer: it passes nothing on) sends this process SIGTERM,
// which a training run takes as a stop request: it finishes its step and checkpoints it instead of training on as an
// orphan (PR_SET_PDEATHSIG). False when `parent` is no longer this process's parent: it died before that took effect.
bool stop_when_the_parent_dies(pid_t parent);

// A waitpid status as a shell would report it: the exit code, or 128 + signal.
int exit_code(int status);

// How a child that failed ended, after its name: "failed (exit 2)", or "was killed by SIGKILL (...)", which is
// mostly the kernel's out-of-memory killer and leaves the child no word of its own, so it is said here.
std::string how_it_failed(int status);

}  // namespace lrkit::cli
