#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/common/message_text.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "file_contents.hpp"
#include "settings_checks.hpp"

namespace lrkit::train {

namespace {

bool each_machines_own(const std::string& key) {
  static const std::vector<std::string> own = {"data.path",          "train.threads",      "train.peak_tflops",
                                               "train.profile_steps", "train.profile_from", "dist.timeout_s",
                                               "dist.rank0_timeout_s"};
  return std::find(own.begin(), own.end(), key) != own.end();
}

// A key as the workers compare it: what it is called and holds on this rank, and the text that must be equal.
struct ComparedKey {
  std::string name, value, compared;
};

// The schedule compares by its rates: a refined(norms=FILE) spec names a file where each machine mounts it.
std::string schedule_rates(const schedules::Schedule& schedule, int64_t steps) {
  distributed::IdentityHash rates;
  for (int64_t step = 0; step < steps; ++step) {
    const double rate = schedule(step);
    rates.add(&rate, sizeof rate);
  }
  return "rates " + std::to_string(rates.value());
}

// Machines that each keep a copy of the corpus may hold different ones (an interrupted copy, an older version): the
// files' sampled contents compare (file_contents.hpp), where a checksum of every byte would read the whole corpus at
// every start. One key for all files, so that every rank compares as many keys whatever its sources.
ComparedKey data_contents(const TrainConfig& config) {
  ComparedKey key{"data contents", "", ""};
  for (const auto& source : config.data_sources()) {
    const std::string contents = file_contents(source.path).value_or("unreadable");
    const std::string separator = key.value.empty() ? "" : "; ";
    key.value += separator + (config.data.sources.empty() ? "" : source.name + " ") + contents + " ('" + source.path + "')";
    key.compared += separator + contents;
  }
  return key;
}

std::vector<ComparedKey> compared_keys(const TrainConfig& config, const schedules::Schedule& schedule) {
  std::vector<ComparedKey> keys;
  for (const auto& [name, value] : compared_values(config))
    if (!each_machines_own(name)) keys.push_back({name, value, name == "schedule.spec" ? schedule_rates(schedule, config.train.steps) : value});
  keys.push_back(data_contents(config));
  return keys;
}

}  // namespace

void require_one_config(const TrainConfig& config, const schedules::Schedule& schedule, distributed::Collective& collective) {
  if (collective.world_size() == 1) return;
  const auto keys = compared_keys(config, schedule);
  // The names first: a row of another length (an lrkit with other keys) would fail inside the collective.
  std::string names;
  for (const auto& key : keys) names += key.name + " ";
  const auto schemas = distributed::gather_rows(collective, {distributed::identity_hash(names)});
  if (std::any_of(schemas.begin(), schemas.end(), [&](const auto& schema) { return schema != schemas[0]; }))
    throw std::invalid_argument("the workers run lrkit builds with different settings keys: install one lrkit version "
                                "on every machine");
  // Then every key's hash, a row per rank, in one collective.
  std::vector<int64_t> mine;
  for (const auto& key : keys) mine.push_back(distributed::identity_hash(key.compared));
  const auto rows = distributed::gather_rows(collective, mine);
  std::vector<std::string> differing_ranks;
  std::vector<bool> differing_keys(keys.size(), false);
  for (size_t r = 1; r < rows.size(); ++r) {
    bool differs = false;
    for (size_t k = 0; k < keys.size(); ++k)
      if (rows[r][k] != rows[0][k]) differs = differing_keys[k] = true;
    if (differs) differing_ranks.push_back(std::to_string(r));
  }
  if (differing_ranks.empty()) return;
  std::string listed;
  for (size_t k = 0; k < keys.size(); ++k)
    if (differing_keys[k]) listed += (listed.empty() ? "" : ", ") + keys[k].name + " = " + (keys[k].value.empty() ? "''" : keys[k].value);
  throw std::invalid_argument("the workers run with different settings: " + ranks_for_message(differing_ranks) +
                              (differing_ranks.size() == 1 ? " differs" : " differ") + " from rank 0 in " +
                              listed + " (rank " + std::to_string(collective.rank()) +
                              "'s values); start every worker with the same config file and options");
}

}  // namespace lrkit::train
