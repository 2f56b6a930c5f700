// A check over every rank's value that must be settled before a process group
// exists (so before any collective can carry it): each rank publishes its value
// in the rendezvous store, the last rank to arrive reads them all and publishes
// one verdict, and every rank reads that verdict. All ranks refuse alike, or
// none does, with O(world size) store operations in all.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <functional>
#include <string>
#include <vector>

namespace lrkit::distributed {

// What `judge` finds wrong with every rank's value (rank r's at r): one line, or "" where nothing is.
using StoreJudge = std::function<std::string(const std::vector<std::string>& values)>;

// Publishes `value` as rank `rank` of `world_size` under `topic` (a key prefix used once per group) and returns
// the verdict, the same on every rank; `judge` runs once, on the last rank to arrive. Blocks until every rank
// arrived (the store's timeout).
std::string store_verdict(c10d::Store& store, const std::string& topic, int rank, int world_size, const std::string& value,
                          const StoreJudge& judge);

}  // namespace lrkit::distributed
