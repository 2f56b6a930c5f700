// Runs a sweep's `lrkit train` processes, at most `jobs` at a time, each
// branch after the run it forks from, and a run whose spec reads another run's
// log ({run:NAME}) once that run finished. A run directory records the arguments
// it was started with (sweep_args.txt) and, once finished, a sweep_done
// marker (saying "diverged" for a run that stopped on a non-finite loss, a
// result rather than a failure): finished runs are skipped, unfinished ones resume from their last
// checkpoint, and a directory started with other arguments is moved aside and restarted when it holds no
// checkpoint (nothing trained to lose), an error otherwise.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "lrkit/cli/sweep_plan.hpp"

namespace lrkit::cli {

// kDiverged: the run stopped on a non-finite loss (now or before), or its main run did before its fork, or the run
// whose log its spec reads did.
enum class RunState { kFinished, kSkipped, kDiverged, kFailed, kBlocked };

// Throws UsageError when a run directory holding checkpoints was started with other arguments;
// std::runtime_error when interrupted (SIGINT/SIGTERM stop every child first).
std::vector<RunState> run_sweep(const SweepPlan& plan, const std::string& out, int64_t jobs, std::ostream& progress);

// The directory of run `name` of the sweep writing to `out`.
std::string run_directory(const std::string& out, const std::string& name);

// Whether a rerun of the sweep writing to `out` skips `run`: its directory, started with the same arguments (or
// none recorded), holds its sweep_done marker or its final checkpoint.
bool finished_earlier(const SweepRun& run, const std::string& out);

}  // namespace lrkit::cli
