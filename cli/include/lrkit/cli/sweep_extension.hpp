// A sweep run again with more budgets asks some of its runs for more steps: a branching schedule's main run is
// stretched past the new largest budget (its spec's total and its last fork move), a single run's
// wsds(budgets={budgets}) gains a budget. Where the run's directory holds checkpoints and its new arguments go on
// from it (the same run, longer), it resumes from its newest checkpoint instead of being refused: nothing trained is
// trained again. Run again with fewer budgets, a longer run that holds the shorter one stands for it.
#pragma once

#include <string>
#include <vector>

namespace lrkit::cli {

// True when `now` asks for the run started with `before` (sweep_args.txt's lines), carried out otherwise: the
// arguments differ only in keys that change no result (train::changes_no_result: a [train] log_every or a
// [checkpoint] every edited in the sweep file). The run goes on under `now`.
bool the_same_run(const std::vector<std::string>& before, const std::vector<std::string>& now);

// Those keys' changes from `before` to `now`, "train.log_every = 6 -> 3; checkpoint.every = (unset) -> 4" ("" where
// none).
std::string result_free_changes(const std::vector<std::string>& before, const std::vector<std::string>& now);

// True when `now` continues the run started with `before` (sweep_args.txt's lines): the arguments differ only in
// --train.steps (not fewer), --schedule.spec and --checkpoint.at (and keys that change no result), every update of the earlier run keeps its rate
// under the new schedule, and every checkpoint the new arguments ask for within the earlier run's steps was asked
// for then (a new fork there has no checkpoint to branch from).
bool continues_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now);

// True when the run started with `before` holds the run `now` asks for, once it trained through now's last step (a
// sweep run again with fewer budgets after more were added): the arguments differ only in --train.steps (not more),
// --schedule.spec and --checkpoint.at (and keys that change no result), every checkpoint `now` asks for (its forks, its budgets and its last step) was
// asked for then and so kept, and every update of now's run has the rate it had.
bool holds_the_run(const std::vector<std::string>& before, const std::vector<std::string>& now);

}  // namespace lrkit::cli
