// Threads as the ranks of a job before its process group exists: they share
// one real c10d store, as the workers share the rendezvous store.
#pragma once

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <string>
#include <thread>
#include <vector>

namespace lrkit::testing {

// Calls body(rank, store) on `world` threads at once and returns what each returned, rank r's at r.
template <typename Body>
std::vector<std::string> on_store_ranks(int world, Body body) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  std::vector<std::string> out(static_cast<std::size_t>(world), "not returned");
  std::vector<std::thread> ranks;
  for (int r = 0; r < world; ++r) ranks.emplace_back([&, r] { out[static_cast<std::size_t>(r)] = body(r, *store); });
  for (auto& rank : ranks) rank.join();
  return out;
}

}  // namespace lrkit::testing
