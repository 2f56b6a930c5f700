#include "lrkit/schedules/series_match.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "lrkit/common/numbers.hpp"

namespace lrkit::schedules {

namespace {

// Whether every row's value is within `tolerance` of expected(step).
template <class Expected>
bool every_row_matches(const std::vector<int64_t>& steps, const std::vector<double>& values, double tolerance,
                       Expected expected) {
  for (size_t i = 0; i < steps.size(); ++i)
    if (relative_difference(values[i], expected(steps[i])) > tolerance) return false;
  return true;
}

// The steps at which the schedule started over, if restarts explain every row. A scheduler built anew at a resume at
// step s runs the schedule from its start again: row t holds schedule(t - s). A log of every step shows the restart's
// own row at schedule(0). A log of every k-th step shows the first row after it, at schedule(t - s), where s lies
// after the row before (or is that row's step: a row logged before the resume that the resumed run then trained
// anew). Where a row leaves the schedule, the restart is the s of that span after which the most rows follow (the
// latest among equals). It must explain the row after too, unless that is the last: a schedule run slower is
// otherwise a restart at every row of a sparse log (row t at schedule(t / 2) is schedule(t - t / 2)). The first
// kMostRestartsMeasured restarts that explain the row are measured, so that a log costs at most that many passes over
// its rows beside one evaluation per step it spans.
constexpr int kMostRestartsMeasured = 64;
std::vector<int64_t> restarts_explaining(const Schedule& schedule, const std::vector<int64_t>& steps,
                                         const std::vector<double>& values, double tolerance) {
  const auto follows = [&](size_t row, int64_t restart) {
    return steps[row] >= restart && relative_difference(values[row], schedule(steps[row] - restart)) <= tolerance;
  };
  // How many rows from `row` on follow a restart at `restart`.
  const auto reach = [&](size_t row, int64_t restart) {
    size_t end = row;
    while (end < steps.size() && follows(end, restart)) ++end;
    return end;
  };
  std::vector<int64_t> restarts;
  int64_t since = 0;
  for (size_t i = 0; i < steps.size();) {
    if (follows(i, since)) {
      ++i;
      continue;
    }
    const int64_t earliest = std::max({i == 0 ? int64_t{0} : steps[i - 1], since + 1,
                                       steps[i] - kLongestRestartSearch});
    int64_t best = -1;
    size_t best_end = i;
    int measured = 0;
    for (int64_t s = steps[i]; s >= earliest && measured < kMostRestartsMeasured; --s) {
      if (!follows(i, s)) continue;
      ++measured;
      if (const size_t end = reach(i, s); end > best_end) best = s, best_end = end;
    }
    if (best < 0 || (best_end < i + 2 && best_end < steps.size())) return {};
    restarts.push_back(since = best);
    i = best_end;
  }
  return restarts;
}

std::string plural(double n, const std::string& word) { return format_number(n) + " " + word + (n == 1 ? "" : "s"); }

}  // namespace

std::vector<int64_t> series_steps(const std::vector<double>& steps, const std::vector<double>& values) {
  if (steps.size() != values.size())
    throw std::invalid_argument("the series has " + std::to_string(steps.size()) + " steps for " +
                                std::to_string(values.size()) + " values");
  if (steps.empty()) throw std::invalid_argument("the series has no rows to compare");
  std::vector<int64_t> whole;
  whole.reserve(steps.size());
  for (size_t i = 0; i < steps.size(); ++i) {
    const double s = steps[i];
    if (!(s >= 0.0) || s != std::floor(s) || s > 1e15)
      throw std::invalid_argument("row " + std::to_string(i + 1) + ": step " + format_number(s) +
                                  " is not a whole number of updates from 0 to 1e15");
    if (!whole.empty() && static_cast<int64_t>(s) <= whole.back())
      throw std::invalid_argument("row " + std::to_string(i + 1) + ": step " + format_number(s) +
                                  " does not follow step " + std::to_string(whole.back()) +
                                  " (the steps must increase)");
    if (!std::isfinite(values[i]))
      throw std::invalid_argument("row " + std::to_string(i + 1) + " (step " + format_number(s) + "): the rate " +
                                  format_number(values[i]) + " is not finite");
    whole.push_back(static_cast<int64_t>(s));
  }
  return whole;
}

double relative_difference(double a, double b) {
  if (a == b) return 0.0;
  if (!std::isfinite(a) || !std::isfinite(b)) return std::numeric_limits<double>::infinity();  // inf / inf is NaN
  const double scale = std::max(std::fabs(a), std::fabs(b));
  return scale == 0.0 ? 0.0 : std::fabs(a - b) / scale;
}

SeriesMatch match_series(const Schedule& schedule, const std::vector<double>& steps, const std::vector<double>& values,
                         double tolerance) {
  return match_checked_series(schedule, series_steps(steps, values), values, tolerance);
}

SeriesMatch match_checked_series(const Schedule& schedule, const std::vector<int64_t>& steps,
                                 const std::vector<double>& values, double tolerance) {
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("tolerance must be a finite number >= 0 (got " + format_number(tolerance) + ")");
  SeriesMatch match;
  match.compared = steps.size();
  for (size_t i = 0; i < steps.size(); ++i) {
    const double scheduled = schedule(steps[i]);
    const SeriesRow row{steps[i], values[i], scheduled, relative_difference(values[i], scheduled)};
    if (i == 0 || row.relative > match.worst) match.worst = row.relative, match.worst_row = i, match.worst_detail = row;
    if (row.relative > tolerance && match.follows)
      match.follows = false, match.first_off_row = i, match.first_off_detail = row;
  }
  if (match.follows) return match;

  const auto found = [&](SeriesMistake mistake, double amount) {
    match.mistake = mistake;
    match.amount = amount;
    return match;
  };
  for (int64_t k = 1; k <= kLargestMistakenShift; ++k) {
    for (const int64_t shift : {k, -k}) {
      if (every_row_matches(steps, values, tolerance,
                            [&](int64_t s) { return schedule(std::max<int64_t>(s + shift, 0)); }))
        return found(SeriesMistake::ReadAhead, static_cast<double>(shift));
    }
  }
  if (auto restarts = restarts_explaining(schedule, steps, values, tolerance); !restarts.empty()) {
    match.restarts = std::move(restarts);
    return found(SeriesMistake::Restarted, static_cast<double>(match.restarts.size()));
  }
  const int64_t saturated = std::numeric_limits<int64_t>::max() / kLargestMistakenFactor;
  for (int64_t a = 2; a <= kLargestMistakenFactor; ++a) {
    if (every_row_matches(steps, values, tolerance,
                          [&](int64_t s) { return schedule(s < saturated ? s * a : schedule.total()); }))
      return found(SeriesMistake::Faster, static_cast<double>(a));
  }
  for (int64_t a = 2; a <= kLargestMistakenFactor; ++a) {
    if (every_row_matches(steps, values, tolerance, [&](int64_t s) { return schedule(s / a); }))
      return found(SeriesMistake::Slower, static_cast<double>(a));
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const double expected = schedule(steps[i]);
    if (expected == 0.0 || values[i] == 0.0) continue;
    const double scale = values[i] / expected;
    if (every_row_matches(steps, values, tolerance, [&](int64_t s) { return scale * schedule(s); }))
      return found(SeriesMistake::Scaled, scale);
    break;
  }
  return match;
}

std::string steps_text(const std::vector<int64_t>& steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) out += (i ? ", " : "") + std::to_string(steps[i]);
  return out;
}

// The mistake in words: what the loop did, and the usual way a loop comes to do it.
std::string explain(const SeriesMatch& m) {
  const double a = m.amount;
  switch (m.mistake) {
    case SeriesMistake::ReadAhead:
      if (a > 0)
        return "the log is the schedule read " + plural(a, "step") + " ahead: update t ran at its rate of step t + " +
               format_number(a) + " (a loop that calls scheduler.step() before optimizer.step() reads 1 ahead)";
      return "the log is the schedule " + plural(-a, "step") + " behind: update t ran at its rate of step t - " +
             format_number(-a) + ", the first at its first rate (a scheduler stepped late, or first stepped after " +
             "the first updates)";
    case SeriesMistake::Restarted:
      return "the schedule started over at step" + std::string(m.restarts.size() == 1 ? " " : "s ") +
             steps_text(m.restarts) + " (a resume that built a new scheduler without loading its state)";
    case SeriesMistake::Faster:
      return "the log runs the schedule " + format_number(a) + " times as fast: update t ran at its rate of step " +
             format_number(a) + " t (a scheduler stepped per micro-batch, with " + format_number(a) +
             " micro-batches per update)";
    case SeriesMistake::Slower:
      return "the log runs the schedule " + format_number(a) + " times as slow: update t ran at its rate of step " +
             "floor(t / " + format_number(a) + ") (a scheduler stepped once every " + format_number(a) + " updates)";
    case SeriesMistake::Scaled:
      return "the log is the schedule times " + format_number(a) + " (another peak, or a parameter group's own rate)";
    case SeriesMistake::None:
      break;
  }
  return "";
}

const char* mistake_name(SeriesMistake mistake) {
  switch (mistake) {
    case SeriesMistake::ReadAhead: return "read_ahead";
    case SeriesMistake::Restarted: return "restarted";
    case SeriesMistake::Faster: return "faster";
    case SeriesMistake::Slower: return "slower";
    case SeriesMistake::Scaled: return "scaled";
    case SeriesMistake::None: break;
  }
  return "none";
}

}  // namespace lrkit::schedules
