// `lrkit train --nproc N`: starts N local workers of this same executable with
// the torchrun variables set, waits for all, and stops the others as soon as
// one fails, so a dead worker never leaves its peers hanging.
#pragma once

#include <string>
#include <vector>

namespace lrkit::cli {

// Returns the exit code: 0 when every worker succeeded; the first failure's when it
// is 2 (bad input) or 3 (diverged), else 1; 128 + the signal that stopped the run.
int launch_local_workers(const std::vector<std::string>& command_args, int workers);

}  // namespace lrkit::cli
