// What the run-log reader (rank_log.cpp) and the text-log reader (text_rank_log.cpp) share.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {

enum Field : size_t { kStep, kRank, kLoss, kGradNorm, kCosToMean };
inline const char* const kFields[] = {"step", "rank", "loss", "grad_norm", "cos_to_mean"};

// What is wrong with a finite value of a field that cannot hold it (a negative gradient norm, a cosine past 1): the
// problem in words, or "".
std::string out_of_range(Field field, double value);

// The resumes among a log's sessions, given in the order they ran, whose rows the log holds (`steps`).
std::vector<Resume> resumes_with_rows(const std::vector<Resume>& sessions, const std::vector<double>& steps);

// Per-rank CSV / JSON-lines logs: one path holds every rank (a rank column or field, or a column per rank); several
// are one file per rank, in rank order.
RankLog read_text_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options);

// Weights & Biases run logs (.wandb), gathered into runs by ID (a run's sessions, resumed, in the order they ran): one
// run holds every rank (a rank field or a field per rank in its rows); several are one run per rank, each run's rank
// its config's rank field, else the number its name holds, else the order the runs started in (said in a warning).
RankLog read_wandb_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options);

// TensorBoard event files, gathered into runs by directory (a run's files are its sessions, resumed, in the order of
// their names): one run holds every rank (a tag per rank, or add_scalars' runs below it); several are one run per rank,
// ranked by the number their directories' names differ in, or by file where one directory holds several writers'
// files written at the same time (tfevents_rank_log.cpp).
RankLog read_tfevents_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options);

}  // namespace lrkit::diagnostics
