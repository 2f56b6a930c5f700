#include "lrkit/schedules/series_match.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>

#include "crossing_search.hpp"
#include "length_search.hpp"
#include "lrkit/common/numbers.hpp"
#include "setting_search.hpp"

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

// From a length that fits every row, the farthest length in `direction` (+1, -1) up to which every length fits too.
// The fitting lengths around one are taken to be a span (the schedule's own length, which the rows do not follow,
// ends it): it is found by doubling the distance until a length does not fit, then halving the last gap, in about
// 2 log2(span) passes over the rows. (A setting's span is halved within its range instead, to 1e-4 of its value:
// setting_search.cpp. Lengths reach 1e15 steps, where halving the whole range would cost 50 passes for a span of 1.)
template <class Fits>
int64_t farthest_fitting(int64_t length, int64_t direction, Fits fits) {
  int64_t good = 0, bad = 1;
  while (bad <= (int64_t{1} << 40) && fits(length + direction * bad)) good = bad, bad *= 2;
  while (bad - good > 1) {
    const int64_t middle = good + (bad - good) / 2;
    (fits(length + direction * middle) ? good : bad) = middle;
  }
  return length + direction * good;
}

// Where the rows follow the schedule's spec built for another length: every row (OtherLength), or the rows up to
// one under one length and those after it under another, one of the two the schedule's own (LengthChanged: a resume
// with another run length, whose scheduler took its restored step into a schedule of the new length). The lengths
// tried are those that give its rate to the first row off, the worst row or the last: in a run given too long a
// length the last row is mid-decay, in one given too short a length the first row off is, and the worst row pins a
// length where the first row off lies where lengths differ little (just past a warmup).
constexpr int64_t kShapeSamples = 1024;
bool explained_by_length(const Schedule& schedule, const std::vector<int64_t>& steps,
                         const std::vector<double>& values, double tolerance, SeriesMatch& match) {
  detail::LengthSearch search(schedule, tolerance);
  if (!search.possible()) return false;
  const size_t rows = steps.size(), first_off = match.first_off_row;
  // A length names a mistake only where it shapes the schedule before either end, not only where it holds its end
  // value: the rates of steps, milestones or an exponential do not depend on the length, and cut short at any length
  // they would fit a log that holds a rate from some step on. Looked at on up to kShapeSamples steps before the end.
  const auto shapes = [&](int64_t length) {
    const Schedule& other = *search.built_for(length);
    const int64_t end = std::min(length, schedule.total());
    const int64_t every = std::max<int64_t>(1, end / kShapeSamples);
    for (int64_t t = 0; t < end; t += every)
      if (relative_difference(other(t), schedule(t)) > tolerance) return true;
    return false;
  };
  std::vector<int64_t> lengths;
  for (const size_t row : {first_off, match.worst_row, rows - 1})
    for (const int64_t length : search.lengths_giving(steps[row], values[row]))
      if (std::find(lengths.begin(), lengths.end(), length) == lengths.end() && shapes(length))
        lengths.push_back(length);
  const auto fits_every_row = [&](int64_t length) {
    const Schedule* built = length > 0 ? search.built_for(length) : nullptr;
    return built && detail::first_row_off(*built, steps, values, tolerance, 0) == rows;
  };
  for (const int64_t length : lengths) {
    if (!fits_every_row(length)) continue;
    // A log of every k-th step may fit the lengths next to it too: all of them are named.
    match.mistake = SeriesMistake::OtherLength;
    match.other_length = farthest_fitting(length, -1, fits_every_row);
    match.other_length_last = farthest_fitting(length, +1, fits_every_row);
    match.amount = static_cast<double>(match.other_length);
    return true;
  }
  const auto changed = [&](int64_t before, int64_t after, size_t first_after) {
    match.mistake = SeriesMistake::LengthChanged;
    match.amount = static_cast<double>(before == schedule.total() ? after : before);
    match.length_change = {before, after, steps[first_after - 1], steps[first_after]};
    return true;
  };
  for (const int64_t length : lengths) {
    const Schedule& other = *search.built_for(length);
    // Another length up to a row past the first row off, the schedule's own from the next on.
    const size_t first_after = detail::first_row_off(other, steps, values, tolerance, 0);
    if (first_after > first_off && detail::first_row_off(schedule, steps, values, tolerance, first_after) == rows)
      return changed(length, schedule.total(), first_after);
    // The schedule's own length up to the first row off, another from there on.
    if (first_off > 0 && detail::first_row_off(other, steps, values, tolerance, first_off) == rows)
      return changed(schedule.total(), length, first_off);
  }
  // A length shorter than the log, every row before its end under it but not all rows after: a scheduler stepped past
  // the length it was given, which does not hold its end value there (Hugging Face's cosine rises again, PyTorch's
  // CosineAnnealingLR starts another period). At least two rows off the schedule must lie before that end.
  for (const int64_t length : lengths) {
    const auto end_row = static_cast<size_t>(std::lower_bound(steps.begin(), steps.end(), length) - steps.begin());
    if (end_row < first_off + 2) continue;
    if (const size_t left = detail::first_row_off(*search.built_for(length), steps, values, tolerance, 0);
        left >= end_row && left < rows) {
      match.mistake = SeriesMistake::OtherLength;
      match.amount = static_cast<double>(length);
      match.other_length = length;
      match.other_length_last = length;
      match.left_end_value_at = steps[left];
      return true;
    }
  }
  return false;
}

// A length whose schedule gives every row the rate that the mistake found gives it, where there is one: a schedule
// run `factor` times as fast is, at whole steps and without a warmup of fixed steps, the schedule of T / factor
// steps (as slow: T factor steps), and the rows cannot tell the loop's mistake from another run length.
int64_t length_alike(const Schedule& schedule, const std::vector<int64_t>& steps, const std::vector<double>& values,
                     double tolerance, SeriesMistake mistake, int64_t factor) {
  detail::LengthSearch search(schedule, tolerance);
  if (!search.possible()) return 0;
  const int64_t total = schedule.total();
  if (mistake == SeriesMistake::Faster && total % factor != 0) return 0;
  if (mistake == SeriesMistake::Slower && total > std::numeric_limits<int64_t>::max() / factor) return 0;
  const int64_t length = mistake == SeriesMistake::Faster ? total / factor : total * factor;
  const Schedule* built = search.built_for(length);
  return built && detail::first_row_off(*built, steps, values, tolerance, 0) == steps.size() ? length : 0;
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

// `length` over the schedule's, to 4 significant digits: "3", "0.25", "1.333".
std::string ratio_text(int64_t length, int64_t schedule_length) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", static_cast<double>(length) / static_cast<double>(schedule_length));
  return text;
}

std::string other_length_text(const SeriesMatch& m) {
  const bool span = m.other_length_last != m.other_length;
  const std::string shortest = ratio_text(m.other_length, m.schedule_length),
                    longest = ratio_text(m.other_length_last, m.schedule_length);
  std::string text = "the log follows the schedule built for " +
                     (span ? "any length from " + std::to_string(m.other_length) + " to " +
                                 std::to_string(m.other_length_last) + " steps"
                           : std::to_string(m.other_length) + " steps") +
                     " instead of " + std::to_string(m.schedule_length) + " (" + shortest +
                     (longest != shortest ? " to " + longest : "") + " times as long" +
                     (span ? "; its rows fit each" : "") + "): its warmup, decay and end lie where a run of " +
                     (span ? "such a" : "that") + " length has them (a scheduler given another run length, such as "
                     "one counted in micro-batches or per epoch without dividing by the gradient accumulation or the "
                     "number of workers)";
  if (m.left_end_value_at > 0)
    text += "; past that end, from step " + std::to_string(m.left_end_value_at) + " on, the log leaves its end " +
            "value: the scheduler ran past the length it was given (Hugging Face's cosine rises again there, " +
            "PyTorch's CosineAnnealingLR starts another period)";
  return text;
}

// Faster and Slower: the run length that gives the same rows, where one does.
std::string alike_text(const SeriesMatch& m) {
  if (m.other_length == 0) return "";
  return "; the same rates are the schedule built for " + std::to_string(m.other_length) +
         " steps, a scheduler given that run length (these rows cannot tell the two apart)";
}

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
  match.schedule_length = schedule.bounded() ? schedule.total() : 0;
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
                          [&](int64_t s) { return schedule(s < saturated ? s * a : schedule.total()); })) {
      match.other_length = match.other_length_last =
          length_alike(schedule, steps, values, tolerance, SeriesMistake::Faster, a);
      return found(SeriesMistake::Faster, static_cast<double>(a));
    }
  }
  for (int64_t a = 2; a <= kLargestMistakenFactor; ++a) {
    if (every_row_matches(steps, values, tolerance, [&](int64_t s) { return schedule(s / a); })) {
      match.other_length = match.other_length_last =
          length_alike(schedule, steps, values, tolerance, SeriesMistake::Slower, a);
      return found(SeriesMistake::Slower, static_cast<double>(a));
    }
  }
  if (explained_by_length(schedule, steps, values, tolerance, match)) return match;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double expected = schedule(steps[i]);
    if (expected == 0.0 || values[i] == 0.0) continue;
    const double scale = values[i] / expected;
    if (every_row_matches(steps, values, tolerance, [&](int64_t s) { return scale * schedule(s); }))
      return found(SeriesMistake::Scaled, scale);
    break;
  }
  if (auto setting = detail::setting_explaining(schedule, steps, values, tolerance,
                                                {match.first_off_row, match.worst_row, steps.size() - 1})) {
    match.setting = {setting->number.name, setting->given,   setting->value,          setting->spec,
                     setting->lowest,      setting->highest, setting->highest_is_last};
    return found(SeriesMistake::OtherSetting, 0.0);
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
             " micro-batches per update)" + alike_text(m);
    case SeriesMistake::Slower:
      return "the log runs the schedule " + format_number(a) + " times as slow: update t ran at its rate of step " +
             "floor(t / " + format_number(a) + ") (a scheduler stepped once every " + format_number(a) + " updates)" +
             alike_text(m);
    case SeriesMistake::OtherLength:
      return other_length_text(m);
    case SeriesMistake::LengthChanged: {
      const LengthChange& c = m.length_change;
      return "the run's length changed after step " + std::to_string(c.last_step_before) +
             ": the rows up to it follow the schedule built for " + std::to_string(c.before) +
             " steps, those from step " + std::to_string(c.first_step_after) + " on the one built for " +
             std::to_string(c.after) + " (a resume with another run length, whose scheduler took its restored step " +
             "into a schedule of the new length)";
    }
    case SeriesMistake::Scaled:
      return "the log is the schedule times " + format_number(a) + " (another peak, or a parameter group's own rate)";
    case SeriesMistake::OtherSetting: {
      const OtherSettingFound& s = m.setting;
      const std::string span =
          s.lowest == s.highest ? ""
                                : "; the rows fit any value from " + s.lowest + " to " + s.highest +
                                      (s.highest_is_last ? ", the largest tried" : "");
      return "the log follows " + s.spec + ": the spec with " + s.name + "=" + s.value +
             (s.given.empty() ? ", which it leaves at its default" : " instead of " + s.given) + span +
             " (a scheduler given another value)";
    }
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
    case SeriesMistake::OtherLength: return "other_length";
    case SeriesMistake::LengthChanged: return "length_changed";
    case SeriesMistake::Scaled: return "scaled";
    case SeriesMistake::OtherSetting: return "other_setting";
    case SeriesMistake::None: break;
  }
  return "none";
}

}  // namespace lrkit::schedules
