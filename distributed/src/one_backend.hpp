// Every worker of a job must use one c10d backend. A Gloo rank and an NCCL rank
// would each wait in their own group's rendezvous until the timeout and then
// fail with a message that names neither; and dist.backend=auto picks by the
// device, so a machine whose config trains elsewhere gets another backend too.
// The ranks compare their backends through the rendezvous store (store_verdict)
// before either group starts.
#pragma once

#include <torch/csrc/distributed/c10d/Store.hpp>

#include <string>
#include <vector>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

// "" when every rank (rank r's backend name at r) uses one backend; else one line that names the ranks of each.
std::string mixed_backends_refusal(const std::vector<std::string>& backends);

// The exchange for rank `rank` of `world_size` using `backend`: mixed_backends_refusal over every rank's backend,
// the same on every rank.
std::string backend_verdict(c10d::Store& store, int rank, int world_size, Backend backend);

}  // namespace lrkit::distributed
