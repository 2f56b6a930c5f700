#include "start_verdict.hpp"

#include <thread>

#include "lrkit/common/message_text.hpp"
#include "store_verdict.hpp"

namespace lrkit::distributed {

std::string refused_start(const std::vector<std::string>& refusals) {
  std::vector<std::string> ranks;
  for (std::size_t r = 0; r < refusals.size(); ++r)
    if (!refusals[r].empty()) ranks.push_back(std::to_string(r));
  if (ranks.empty()) return "";
  const std::string& first = refusals[std::stoul(ranks.front())];
  if (ranks.size() == 1) return ranks_for_message(ranks) + " refused to start: " + first;
  return ranks_for_message(ranks) + " refused to start (rank " + ranks.front() + ": " + first + ")";
}

std::string start_verdict(c10d::Store& store, int rank, int world_size, const std::string& refusal, bool hosts_store,
                          std::chrono::milliseconds timeout) {
  const std::string verdict = store_verdict(store, "start", rank, world_size, refusal, refused_start);
  if (verdict.empty()) return verdict;  // every rank goes on, the store's host too
  const std::string read = "lrkit/start/read";
  store.add(read, 1);
  if (hosts_store) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (store.add(read, 0) < world_size && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return verdict;
}

}  // namespace lrkit::distributed
