// Per-rank training signals read back for offline diagnosis: an lrkit run log
// (HDF5), or a per-rank log another trainer exported as CSV or JSON lines with
// the fields step, rank, loss and optionally grad_norm and cos_to_mean (other
// names mapped with ReadOptions::columns), in one file or one file per rank,
// or Weights & Biases or TensorBoard runs, one per rank or one holding every
// rank's values.
// A log without gradient norms is a log of the loss alone (said in a warning).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lrkit::diagnostics {

class RankLogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where an lrkit run was resumed, among the rows its log holds, and the settings the resume changed ("train.threads
// = 2 -> 1; ..."; "" where it changed none; nothing where the log does not know, as a DispersionHook's): a shift in
// the signals there may be the new settings', not the workers'.
struct Resume {
  double step = 0;
  std::optional<std::string> changed;
};

struct RankLog {
  std::string source;           // the file, and its format
  int64_t ranks = 0;
  std::vector<double> steps;    // one entry per logged optimizer step, increasing
  // Row-major [steps, ranks].
  // grad_norm (always in a run log) and cos_to_mean are empty when not logged.
  std::vector<double> loss, grad_norm, cos_to_mean;
  // Where a log gives gradient norms (cosines) at some steps only, as a loop logging them every k steps does: 1 at the
  // steps that give them, 0 at the others, whose values are NaN. Empty where every step gives them, or none.
  std::vector<uint8_t> grad_norm_logged, cos_to_mean_logged;
  std::vector<double> global_grad_norm;  // ||g_bar|| per step; empty when not logged
  std::vector<double> cos_pairwise;      // exact or sketched mean pairwise cosine; empty when not logged
  // An lrkit run log's /train/skipped per step (0: applied; 1: non-finite loss; 2: loss spike; 3: gradient-norm
  // spike; NaN in rows written before it existed); empty when not logged.
  std::vector<double> skipped;
  std::vector<std::string> warnings;     // what the reader skipped (a step missing a rank's row)
  // A log that records its sessions (lrkit train's and a DispersionHook's HDF5 log: /sessions/<i>; a DispersionHook's
  // JSON lines: "session" on the rows of each session's first step): its resumes whose rows it holds, by step. A
  // resume from an earlier checkpoint rewrote the rows of the sessions that started at or after its step: they are
  // left out.
  bool records_sessions = false;
  std::vector<Resume> resumes;

  double at(const std::vector<double>& m, size_t step, int64_t rank) const {
    return m[step * static_cast<size_t>(ranks) + static_cast<size_t>(rank)];
  }
  size_t size() const { return steps.size(); }
};

struct ReadOptions {
  // The file's name for a field (step, rank, loss, grad_norm, cos_to_mean),
  // e.g. {"loss", "train/loss"}; unmapped fields keep their own names.
  std::map<std::string, std::string> columns;
};

// "loss=train/loss,step=global_step" -> ReadOptions::columns; throws
// RankLogError naming an unknown field or a malformed entry. The entries split as
// a CSV line's fields: blanks around one are dropped, and one in double quotes
// may hold a comma ("loss=mean, all",step=it).
std::map<std::string, std::string> parse_column_mapping(const std::string& text);

// Field and name pairs -> ReadOptions::columns, with parse_column_mapping's checks (an unknown field, one mapped
// twice, an empty name): a name may hold what the text form cannot, a comma (lrkit.diagnose's dict).
std::map<std::string, std::string> column_mapping(const std::vector<std::pair<std::string, std::string>>& entries);

// Reads by content: HDF5 files, W&B run logs and TensorBoard event files by
// signature, else `.csv` or
// JSON lines (`.jsonl`/`.json`). Throws RankLogError naming the file, line or dataset on
// missing fields, duplicate (step, rank) pairs, mismatched lengths and
// truncated or unreadable files. A step that lacks some rank's row is skipped
// with a warning (RankLog::warnings).
RankLog read_rank_log(const std::string& path, const ReadOptions& options = ReadOptions());

// One CSV / JSON-lines file per rank, ranks in the order given (no rank
// column needed); steps are joined across the files as in one file. W&B run
// logs (all of them, not mixed with other kinds) are gathered into runs, each
// run's rank its config's, its name's or its start's; TensorBoard event files
// into runs by directory, each run's rank the number its directory's name
// differs in (rank_log_parts.hpp).
RankLog read_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options = ReadOptions());

// The logs that `inputs` name: a path that exists is itself (a run directory: its log.h5; a W&B run's directory: its
// .wandb log; a directory above W&B runs: every session's log; a directory of TensorBoard event files: those and the
// ones of the runs below it at any depth), any other that holds glob characters (*?[) the files
// it matches, in natural order (rank10 after rank9), each as a path. Throws RankLogError naming a pattern
// that matches nothing.
std::vector<std::string> rank_log_paths(const std::vector<std::string>& inputs);

}  // namespace lrkit::diagnostics
