// Which spec a logged series of learning rates follows, where no spec is given: a run of another trainer, whose
// schedule its user wants to write as an lrkit spec (to compare with, to swap for WSD, to refine).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/series_match.hpp"

namespace lrkit::schedules {

struct SeriesFit {
  bool fits = false;     // every row follows `spec` over `total` steps within the tolerance
  std::string spec;      // the spec (canonical); where none fits, the closest one tried
  int64_t total = 0;     // its run length
  SeriesMatch match;     // the rows against it
};

// Fits the rows (steps from series_steps, values checked with them) with lrkit's common families: constant, cosine,
// linear, wsd (1-sqrt, linear and cosine decays), polynomial, invsqrt, exponential, onecycle and step (its first drop
// giving its steps between drops and its factor). Each starts from the log's peak (its largest rate, written as
// plainly as the tolerance allows) and a linear warmup from 0 to it (the first row at the peak, or where a warmup
// row's slope puts it), over `total` steps (default: the last step + 1); then match_checked_series names one number
// of it, or its length, that the rows follow otherwise. The first family that every row follows is the fit, tried in
// the order above; where none is, the one whose worst row is closest. An empty spec where no family can be built (no
// rate >= 0). Throws std::invalid_argument for a tolerance that is not a finite number >= 0 and a total below 1.
SeriesFit fit_checked_series(const std::vector<int64_t>& steps, const std::vector<double>& values,
                             std::optional<int64_t> total, double tolerance);

}  // namespace lrkit::schedules
