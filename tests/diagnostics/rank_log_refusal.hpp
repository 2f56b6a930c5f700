// What the per-rank log readers give for the logs a test names: the log read (from paths, directories or globs, as
// `lrkit diagnose` takes them), or the reader's refusal; and grids compared value by value.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "lrkit/diagnostics/rank_log.hpp"

namespace lrkit::diagnostics {

// The reader's message, or "no error" where it reads the log.
inline std::string error_of(const std::string& path, const ReadOptions& options = ReadOptions()) {
  try {
    read_rank_log(path, options);
  } catch (const RankLogError& e) {
    return e.what();
  }
  return "no error";
}

// The logs that `inputs` name, read as `lrkit diagnose` reads them.
inline RankLog read_inputs(const std::vector<std::string>& inputs, const ReadOptions& options = ReadOptions()) {
  return read_rank_logs(rank_log_paths(inputs), options);
}

// Their reader's message, or "(no error)".
inline std::string refusal(const std::vector<std::string>& inputs, const ReadOptions& options = ReadOptions()) {
  try {
    read_inputs(inputs, options);
  } catch (const RankLogError& e) {
    return e.what();
  }
  return "(no error)";
}

// The same ranks, steps and values (NaN losses where the other's are), cosines where `got` has them.
inline void expect_same_grid(const RankLog& got, const RankLog& expected) {
  EXPECT_EQ(got.ranks, expected.ranks);
  EXPECT_EQ(got.steps, expected.steps);
  ASSERT_EQ(got.loss.size(), expected.loss.size());
  ASSERT_EQ(got.grad_norm.size(), expected.grad_norm.size());
  ASSERT_EQ(got.cos_to_mean.size(), expected.cos_to_mean.size());
  for (size_t i = 0; i < got.loss.size(); ++i) {
    EXPECT_TRUE(got.loss[i] == expected.loss[i] || (std::isnan(got.loss[i]) && std::isnan(expected.loss[i]))) << i;
    EXPECT_EQ(got.grad_norm[i], expected.grad_norm[i]) << i;
    if (!got.cos_to_mean.empty()) {
      EXPECT_EQ(got.cos_to_mean[i], expected.cos_to_mean[i]) << i;
    }
  }
}

}  // namespace lrkit::diagnostics
