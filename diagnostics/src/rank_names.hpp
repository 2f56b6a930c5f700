// The ranks that the names of one-per-rank runs give (W&B runs' names, TensorBoard runs' directories): rank-0,
// rank-1, ... differ in a number alone, and each run's rank is its number's place among them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lrkit::diagnostics {

// Each name's rank, where the names differ in one number alone (at most 5 digits, the last number in each name) and
// no two share it; nullopt otherwise. Numbers that are not 0 to n-1 (gpu4 to gpu7) rank the names in their order,
// said in a warning that `what` begins ("the W&B runs' names").
std::optional<std::vector<int64_t>> ranks_from_names(const std::vector<std::string>& names, const std::string& what,
                                                     std::vector<std::string>& warnings);

}  // namespace lrkit::diagnostics
