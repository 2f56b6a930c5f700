#include "one_backend.hpp"

#include "lrkit/common/message_text.hpp"
#include "store_verdict.hpp"

namespace lrkit::distributed {

std::string mixed_backends_refusal(const std::vector<std::string>& backends) {
  std::vector<std::string> names;                // in the order of their first ranks
  std::vector<std::vector<std::string>> ranks;  // of each name
  for (std::size_t r = 0; r < backends.size(); ++r) {
    std::size_t i = 0;
    while (i < names.size() && names[i] != backends[r]) ++i;
    if (i == names.size()) {
      names.push_back(backends[r]);
      ranks.emplace_back();
    }
    ranks[i].push_back(std::to_string(r));
  }
  if (names.size() < 2) return "";
  std::string who;
  for (std::size_t i = 0; i < names.size(); ++i)
    who += (i == 0 ? "" : "; ") + ranks_for_message(ranks[i]) + (ranks[i].size() == 1 ? " uses " : " use ") + names[i];
  return "the workers use different process-group backends (" + who +
         "): give every worker the same dist.backend (auto picks nccl where train.device=cuda, gloo on the CPU)";
}

std::string backend_verdict(c10d::Store& store, int rank, int world_size, Backend backend) {
  return store_verdict(store, "backend", rank, world_size, backend_name(backend), mixed_backends_refusal);
}

}  // namespace lrkit::distributed
