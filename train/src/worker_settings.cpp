#include <torch/torch.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/distributed/device_identity.hpp"
#include "settings_checks.hpp"

namespace lrkit::train {

namespace {

bool each_machines_own(const std::string& key) {
  static const std::vector<std::string> own = {"data.path",          "train.threads",      "train.peak_tflops",
                                               "train.profile_steps", "train.profile_from", "dist.timeout_s"};
  return std::find(own.begin(), own.end(), key) != own.end();
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string out = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) out += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += " and " + std::to_string(ranks.size() - 16) + " more";
  return out;
}

}  // namespace

void require_one_config(const TrainConfig& config, distributed::Collective& collective) {
  if (collective.world_size() == 1) return;
  std::vector<std::pair<std::string, std::string>> compared;
  std::string names;
  for (auto& [key, value] : compared_values(config))
    if (!each_machines_own(key)) {
      names += key + " ";
      compared.emplace_back(key, value);
    }
  // The keys first: a tensor of another length (an lrkit with other keys) would fail inside the collective.
  const auto schemas = distributed::gather_identities(collective, names);
  if (std::any_of(schemas.begin(), schemas.end(), [&](int64_t schema) { return schema != schemas[0]; }))
    throw std::invalid_argument("the workers run lrkit builds with different settings keys: install one lrkit version "
                                "on every machine");
  std::vector<int> differing_ranks;
  std::vector<bool> differing_keys(compared.size(), false);
  const auto world = static_cast<size_t>(collective.world_size());
  // Each key's value hashed, every rank's row gathered: one collective for all keys.
  std::vector<int64_t> mine;
  for (const auto& [key, value] : compared) mine.push_back(distributed::identity_hash(key + "=" + value));
  const auto rows = collective.all_gather(torch::tensor(mine, torch::kLong).to(collective.device())).to(torch::kCPU).contiguous();
  const auto table = rows.accessor<int64_t, 2>();
  for (size_t r = 1; r < world; ++r) {
    bool differs = false;
    for (size_t k = 0; k < compared.size(); ++k)
      if (table[static_cast<int64_t>(r)][static_cast<int64_t>(k)] != table[0][static_cast<int64_t>(k)]) differs = differing_keys[k] = true;
    if (differs) differing_ranks.push_back(static_cast<int>(r));
  }
  if (differing_ranks.empty()) return;
  std::string keys;
  for (size_t k = 0; k < compared.size(); ++k)
    if (differing_keys[k])
      keys += (keys.empty() ? "" : ", ") + compared[k].first + " = " + (compared[k].second.empty() ? "''" : compared[k].second);
  throw std::invalid_argument("the workers run with different settings: " + ranks_text(differing_ranks) +
                              (differing_ranks.size() == 1 ? " differs" : " differ") + " from rank 0 in " + keys +
                              " (rank " + std::to_string(collective.rank()) +
                              "'s values); start every worker with the same config file and options");
}

}  // namespace lrkit::train
