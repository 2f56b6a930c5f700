// Per-rank training signals read back for offline diagnosis: an lrkit run log
// (HDF5), or a per-rank log another trainer exported as CSV or JSON lines with
// the fields step, rank, loss, grad_norm and optionally cos_to_mean.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::diagnostics {

class RankLogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RankLog {
  std::string source;           // the file, and its format
  int64_t ranks = 0;
  std::vector<double> steps;    // one entry per logged optimizer step, increasing
  // Row-major [steps, ranks].
  std::vector<double> loss, grad_norm, cos_to_mean;  // cos_to_mean empty when not logged
  std::vector<double> global_grad_norm;  // ||g_bar|| per step; empty when not logged
  std::vector<double> cos_pairwise;      // exact or sketched mean pairwise cosine; empty when not logged

  double at(const std::vector<double>& m, size_t step, int64_t rank) const {
    return m[step * static_cast<size_t>(ranks) + static_cast<size_t>(rank)];
  }
  size_t size() const { return steps.size(); }
};

// Reads by content: HDF5 files by signature, else `.csv` or JSON lines
// (`.jsonl`/`.json`). Throws RankLogError naming the file, line or dataset on
// missing fields, duplicate or missing (step, rank) pairs, mismatched lengths
// and truncated or unreadable files.
RankLog read_rank_log(const std::string& path);

}  // namespace lrkit::diagnostics
