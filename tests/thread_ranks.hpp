// Threads as the ranks of one group (distributed::make_thread_group): each runs
// the same code with its own rank's collective, as the workers of a run do.
// on_threads is the bare form, for ranks that meet elsewhere (a store, a Gloo group).
#pragma once

#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::testing {

// Calls body(rank) on `world` threads at once and returns what each returned, rank r's at r.
template <typename Result, typename Body>
std::vector<Result> on_threads(int world, Body body) {
  std::vector<Result> out(static_cast<size_t>(world));
  std::vector<std::thread> ranks;
  for (size_t r = 0; r < out.size(); ++r) ranks.emplace_back([&, r] { out[r] = body(r); });
  for (auto& rank : ranks) rank.join();
  return out;
}

// Calls body(rank, collective) on `world` threads at once and returns what each returned, rank r's at r.
template <typename Result, typename Body>
std::vector<Result> on_thread_ranks(int world, Body body, torch::Device device = torch::kCPU) {
  auto group = distributed::make_thread_group(world, device);
  return on_threads<Result>(world, [&](size_t r) { return body(r, *group[r]); });
}

// What body(rank, collective) threw as std::invalid_argument on each rank, "" where it returned.
template <typename Body>
std::vector<std::string> refusals_on_thread_ranks(int world, Body body) {
  return on_thread_ranks<std::string>(world, [&](size_t rank, distributed::Collective& collective) {
    try {
      body(rank, collective);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  });
}

}  // namespace lrkit::testing
