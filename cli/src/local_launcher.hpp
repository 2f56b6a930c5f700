// `lrkit train --nproc N`: starts N local workers of this same executable with
// the torchrun variables set, waits for all, and stops the others as soon as
// one fails, so a dead worker never leaves its peers hanging.
#pragma once

#include <string>
#include <vector>

namespace lrkit::cli {

// Returns the exit code: 0 when every worker succeeded, else the first failure's.
int launch_local_workers(const std::vector<std::string>& command_args, int workers);

}  // namespace lrkit::cli
