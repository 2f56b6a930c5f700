// What tells one device or machine from another across the processes of a
// job: a GPU's UUID (its CUDA index depends on which GPUs a process sees), a
// machine's host name. Ranks with the same identity share that device.
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lrkit/distributed/collective.hpp"

namespace lrkit::distributed {

// The name of this machine (gethostname), "" where it cannot be read.
std::string host_name();

// "gpu:<uuid>" for a CUDA device, "cpu:<host name>" for the CPU. Throws std::invalid_argument for a CUDA device in a
// build without CUDA.
std::string device_identity(const torch::Device& device);

// A non-negative 64-bit hash (FNV-1a) of bytes that may come in pieces: collectives move tensors, not strings, and
// equal hashes are equal identities.
class IdentityHash {
 public:
  IdentityHash& add(const void* bytes, size_t size);
  int64_t value() const { return static_cast<int64_t>(hash_ >> 1); }

 private:
  uint64_t hash_ = 14695981039346656037ULL;
};

// IdentityHash of `identity`'s characters.
int64_t identity_hash(const std::string& identity);

// Every rank's `row` of whole numbers (identity hashes, counts, steps), rank r's at r. One all-gather: every rank of
// `collective` must call it with a row of the same length.
std::vector<std::vector<int64_t>> gather_rows(Collective& collective, const std::vector<int64_t>& row);

}  // namespace lrkit::distributed
