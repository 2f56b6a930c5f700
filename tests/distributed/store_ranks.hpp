// Threads as the ranks of a job before its process group exists: they share
// one real c10d store, as the workers share the rendezvous store.
#pragma once

#include <torch/csrc/distributed/c10d/HashStore.hpp>

#include <string>
#include <vector>

#include "thread_ranks.hpp"

namespace lrkit::testing {

// Calls body(rank, store) on `world` threads at once and returns what each returned, rank r's at r.
template <typename Body>
std::vector<std::string> on_store_ranks(int world, Body body) {
  const auto store = c10::make_intrusive<c10d::HashStore>();
  return on_threads<std::string>(world, [&](size_t rank) { return body(static_cast<int>(rank), *store); });
}

}  // namespace lrkit::testing
