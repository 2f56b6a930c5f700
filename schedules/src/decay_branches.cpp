#include "lrkit/schedules/decay_branches.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/usable_rates.hpp"

namespace lrkit::schedules {

int64_t main_run_length(int64_t largest) {
  return std::max(2 * largest, std::min(1000 * largest, kLongestCheckedRun));
}

std::optional<int64_t> fork_step(const Schedule& main, const Schedule& branch, int64_t budget) {
  for (int64_t step = 0; step < budget; ++step)
    if (branch(step) != main(step)) return step;
  return std::nullopt;
}

int64_t DecayBranches::main_steps() const {
  int64_t latest = 0;
  for (const auto& b : branches) latest = std::max(latest, b.fork);
  return latest;
}

std::vector<int64_t> DecayBranches::forks() const {
  std::set<int64_t> forks;
  for (const auto& b : branches)
    if (b.fork > 0) forks.insert(b.fork);
  return {forks.begin(), forks.end()};
}

int64_t DecayBranches::steps() const {
  int64_t total = main_steps();
  for (const auto& b : branches) total += b.budget - b.fork;
  return total;
}

DecayBranches decay_branches(const std::string& spec, const std::vector<int64_t>& budgets) {
  if (budgets.empty()) throw std::invalid_argument("decay branches need at least one budget");
  std::set<int64_t> seen;
  for (const int64_t budget : budgets) {
    if (budget < 1 || budget > kLongestCheckedRun)
      throw std::invalid_argument("budget " + std::to_string(budget) + " is not a number of steps in [1, " +
                                  std::to_string(kLongestCheckedRun) + "]");
    if (!seen.insert(budget).second) throw std::invalid_argument("budget " + std::to_string(budget) + " is given twice");
  }
  const int64_t main_length = main_run_length(*seen.rbegin());
  DecayBranches plan{parse_schedule(spec, main_length), {}};
  if (plan.main.total() != main_length)
    throw std::invalid_argument("schedule '" + spec + "' has a length of its own (" + std::to_string(plan.main.total()) +
                                " steps); a branch's length is its budget: remove total=");
  for (const int64_t budget : budgets) {
    Schedule branch = parse_schedule(spec, budget);
    require_usable_rates(branch, budget);
    const auto fork = fork_step(plan.main, branch, budget);
    if (!fork)
      throw std::invalid_argument("schedule '" + spec + "' never departs from the main run at budget " +
                                  std::to_string(budget) + " (it does not decay): it needs no branches");
    plan.branches.push_back({budget, *fork, std::move(branch)});
  }
  return plan;
}

}  // namespace lrkit::schedules
