// Whether every worker of a job starts. A worker refuses to start for what it
// alone finds (rank 0's run directory held by another run, a data file missing
// on one machine, a network interface one machine lacks), and the others once
// waited for it at the rendezvous until dist.timeout_s, then failed with a
// socket timeout that did not say why. Each rank publishes its refusal ("": it
// starts) in the rendezvous store; every rank reads one verdict.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <string>
#include <vector>

namespace lrkit::distributed {

// Which ranks refuse and the first one's reason (rank r's refusal at r; "" where none does).
std::string refused_start(const std::vector<std::string>& refusals);

// Publishes this rank's refusal and returns the verdict, the same on every rank. Where some rank refuses, the rank
// that hosts the store (`hosts_store`) waits, up to `timeout`, until every rank has read the verdict: its exit takes
// the store with it.
std::string start_verdict(c10d::Store& store, int rank, int world_size, const std::string& refusal, bool hosts_store,
                          std::chrono::milliseconds timeout);

}  // namespace lrkit::distributed
