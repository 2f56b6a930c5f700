// A sweep run again with more budgets asks some of its runs for more steps: a branching schedule's main run is
// stretched past the new largest budget (its spec's total and its last fork move), a single run's
// wsds(budgets={budgets}) gains a budget. Where the run's directory holds checkpoints and its new arguments go on
// from it (the same run, longer), it resumes from its newest checkpoint instead of being refused: nothing trained is
// trained again.
#pragma once

#include <string>
#include <vector>

namespace lrkit::cli {

// True when `now` continues the run started with `before` (sweep_args.txt's lines): the arguments differ only in
// --train.steps (not fewer), --schedule.spec and --checkpoint.at, every update of the earlier run keeps its rate
// under the new schedule, and every checkpoint the new arguments ask for within the earlier run's steps was asked
// for then (a new fork there has no checkpoint to branch from).
bool continues_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now);

}  // namespace lrkit::cli
