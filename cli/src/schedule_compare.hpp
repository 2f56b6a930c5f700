// `lrkit schedule SPEC --compare FILE`: whether the learning rates a run logged follow SPEC, and if not, which loop
// mistake explains the difference (schedules::match_series); `lrkit schedule --fit FILE`: which spec they follow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "schedule_output.hpp"

namespace lrkit::cli {

struct CompareRequest {
  std::string spec, file;
  std::string column = "/train/lr";  // the steps are its sibling `step` (/train/step; a text file's step column)
  // The run's length; default: the log's max_steps, else the spec's own, else the last logged step + 1.
  std::optional<int64_t> steps;
  double tolerance = 1e-6;
  TableFormat format = TableFormat::Csv;  // Json: one object; otherwise text lines
};

// Prints the verdict and returns the exit code: 0 when every logged rate is within the tolerance of SPEC's, 1 when
// not. Bad input (spec, file, column, rows, tolerance) is a UsageError naming it.
int compare_with_log(const CompareRequest& request);

// `lrkit schedule --fit FILE`: the spec the rates a run logged follow (schedules::fit_checked_series), for a run whose
// spec is not known. The request's spec is unused.
// Prints it and returns 0, or where no family fits, the closest one tried and 1. Bad input is a UsageError.
int fit_log(const CompareRequest& request);

}  // namespace lrkit::cli
