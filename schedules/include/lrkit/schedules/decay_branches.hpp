// A budget sweep with decay branches (Hagele et al. 2024, WSD's "one run, many
// budgets"): one main run trains under the schedule stretched far past the
// largest budget, so that it has not begun to decay where any branch leaves it,
// and the branch of budget B continues the main run's state from its fork, the
// first update whose rate under the schedule of B steps differs from the main
// run's, and decays to B. A branch is the separate run of its budget, bit for
// bit; the sweep trains the latest fork plus each budget's steps past its fork.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"

namespace lrkit::schedules {

// The main run's length for budgets up to `largest`: 1000 x largest, far past every fork, but at most
// kLongestCheckedRun (the longest run whose rates lrkit checks: a PyTorch scheduler of the main run checks them all),
// and at least 2 x largest. Each fork is found by comparing the schedules, so a branch is its budget's separate run
// whatever the length; a main run that decayed before a branch's own decay would only make that branch fork
// earlier. A WSD main run of 2 x largest steps decays after every budget's decay has begun.
int64_t main_run_length(int64_t largest);

// The first update of `branch` (a schedule of `budget` steps) whose rate differs from `main`'s, found step by step;
// nullopt when none before `budget` does (a schedule that does not decay has no fork).
std::optional<int64_t> fork_step(const Schedule& main, const Schedule& branch, int64_t budget);

struct DecayBranch {
  int64_t budget;
  int64_t fork;       // the first update the branch trains itself (0: it departs at once and trains from scratch)
  Schedule schedule;  // the schedule of `budget` steps; the branch runs its updates fork..budget-1
};

struct DecayBranches {
  Schedule main;                      // the spec stretched to main_run_length(the largest budget)
  std::vector<DecayBranch> branches;  // in the budgets' order
  // The updates the main run trains: up to the latest fork.
  int64_t main_steps() const;
  // The main run's update counts after which a branch continues (forks above 0, ascending, each once): where the
  // main run saves its state.
  std::vector<int64_t> forks() const;
  // The updates the whole sweep trains (the main run's and every branch's past its fork), against the sum of the
  // budgets for separate runs.
  int64_t steps() const;
};

// The plan of a sweep of `spec` (a schedule whose length is the run's: no total= of its own) over `budgets`.
// Throws SpecError for a bad spec and std::invalid_argument naming the problem for no budgets, a budget below 1,
// above kLongestCheckedRun or given twice, a spec with a length of its own, and a budget whose schedule never
// departs from the main run's (it does not decay: train it once).
DecayBranches decay_branches(const std::string& spec, const std::vector<int64_t>& budgets);

}  // namespace lrkit::schedules
