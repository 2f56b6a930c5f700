#include "lrkit/schedules/series_fit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>

#include "crossing_search.hpp"
#include "log_shape.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {

namespace {

using detail::LogShape;
using detail::plainest_near;
using detail::plainest_whole;

std::string whole(int64_t n) { return std::to_string(n); }

// A floor of `floor` under `peak`, as the plainer of the rate itself and its percentage of the peak ("10%").
std::string floor_text(double floor, double peak, double tolerance) {
  const std::string rate = format_number(plainest_near(floor, tolerance / 4));
  if (!(peak > 0)) return rate;
  const std::string percent = format_number(plainest_near(100.0 * floor / peak, tolerance / 4)) + "%";
  return percent.size() < rate.size() ? percent : rate;
}

// The specs tried for a run of `length` steps, in order, each from what the log's shape tells (log_shape.hpp); the
// search of match_checked_series then finds one number of each, or its length, that the rows follow otherwise.
class Candidates {
 public:
  Candidates(const LogShape& shape, const std::vector<int64_t>& steps, const std::vector<double>& values,
             int64_t length, double tolerance)
      : s_(shape), steps_(steps), values_(values), length_(length), tolerance_(tolerance) {
    peak_ = "peak=" + format_number(s_.peak);
    if (s_.warmup > 0) {
      warmup_ = ", warmup=" + whole(s_.warmup);
      if (s_.warmup_init > 0) warmup_ += ", warmup_init=" + format_number(s_.warmup_init);
      if (s_.warmup_shape != "linear") warmup_ += ", warmup_shape=" + s_.warmup_shape;
    }
  }

  std::vector<std::string> specs() {
    // A rate that climbs again after its peak is a cycle's: no other family tried climbs after its peak.
    if (!s_.climbs.empty()) {
      cycles();
      return out_;
    }
    // A cosine warmup is OneCycleLR's first phase: named so before the cosine decay after a cosine warmup that gives
    // the same rates.
    const bool one_cycle_first = s_.warmup_shape == "cosine";
    if (one_cycle_first) onecycles();
    // A log that ends holding a floor is a step schedule's last level, or a decay that ended there: tried first, as
    // each family tried before them costs a search over every row.
    if (s_.hold) {
      steps();
      ends_at_floor();
    }
    decays(std::nullopt, std::nullopt);
    add("polynomial(" + peak_ + warmup_ + ", power=2)");
    add("invsqrt(" + peak_ + warmup_ + ")");
    // Hugging Face's and big_vision's: the timescale written out, for the search to find.
    add("invsqrt(" + peak_ + warmup_ + ", timescale=" + whole(std::max<int64_t>(s_.warmup, 1)) + ", shift=true)");
    add("exponential(" + peak_ + warmup_ + ", gamma=0.99)");
    add("uba(" + peak_ + ", phi=1" + warmup_ + ")");
    if (!one_cycle_first) onecycles();
    if (!s_.hold) {
      steps();
      ends_at_floor();
    }
    ramp();
    return out_;
  }

 private:
  void add(std::string spec) { out_.push_back(std::move(spec)); }

  // constant, cosine, linear and wsd (1-sqrt, linear, cosine and Megatron's exp decays), and where a floor is given,
  // polynomial; with the family's own total where one is given (a decay that ends before the run). The wsd's decay
  // ends at that total (or the run's end) and starts where the log leaves its peak, or is 20 %.
  void decays(std::optional<double> floor, std::optional<int64_t> own_total) {
    // linear's floor is a rate (one above the peak ramps up), the others' may be a percentage of the peak.
    const auto more = [&](bool percent) {
      std::string text;
      if (floor)
        text += ", floor=" + (percent ? floor_text(*floor, s_.peak, tolerance_)
                                      : format_number(plainest_near(*floor, tolerance_ / 4)));
      return own_total ? text + ", total=" + whole(*own_total) : text;
    };
    if (!floor) add("constant(" + peak_ + warmup_ + ")");
    add("cosine(" + peak_ + more(true) + warmup_ + ")");
    add("linear(" + peak_ + more(false) + warmup_ + ")");
    for (const char* shape : {"1-sqrt", "linear", "cosine", "exp"})
      add("wsd(" + peak_ + more(true) + ", decay=" + decay(own_total.value_or(length_)) + ", shape=" + shape + warmup_ +
          ")");
    if (floor) add("polynomial(" + peak_ + more(true) + ", power=2" + warmup_ + ")");
  }

  // A decay ending at `end` that starts where the log leaves its peak (somewhere from the last row at the peak to
  // the first below it), as a percentage of the run where it is a whole one; 20% where the log does not leave it.
  std::string decay(int64_t end) const {
    if (!s_.leaves_peak) return "20%";
    const int64_t steps = plainest_whole(end - s_.leaves_peak->at + 1, end - s_.leaves_peak->after);
    if (steps < 1 || steps >= end - s_.warmup) return "20%";
    if (end == length_ && 100 * steps % length_ == 0) return whole(100 * steps / length_) + "%";
    return whole(steps);
  }

  // OneCycleLR: its start peak / div_factor at step 0, its peak at step pct_start T - 1, and its end at step T - 1
  // start / final_div_factor, read from the log where it holds those rows; linear and cosine annealing, two and
  // three phases.
  void onecycles() {
    std::string read;
    double start = s_.largest / 25.0;
    if (steps_.front() == 0 && values_.front() > 0) {
      const double div = plainest_near(s_.largest / values_.front(), tolerance_ / 4);
      start = s_.largest / div;
      if (relative_difference(div, 25.0) > tolerance_) read += ", div_factor=" + format_number(div);
    }
    const double pct = plainest_near(static_cast<double>(steps_[s_.peak_row] + 1) / static_cast<double>(length_),
                                     tolerance_ / 4);
    if (pct < 1 && relative_difference(pct, 0.3) > tolerance_) read += ", pct_start=" + format_number(pct);
    if (steps_.back() == length_ - 1 && values_.back() > 0) {
      const double final_div = plainest_near(start / values_.back(), tolerance_ / 4);
      if (relative_difference(final_div, 1e4) > tolerance_) read += ", final_div_factor=" + format_number(final_div);
    }
    for (const char* phases : {"", ", three_phase=true"})
      for (const char* anneal : {"", ", anneal=linear"}) add("onecycle(" + peak_ + read + anneal + phases + ")");
  }

  // StepLR from the first drop after the peak (the steps to it from the warmup's end, the factor), MultiStepLR from
  // every drop (each somewhere from the row before it to its row: the plainest step there).
  void steps() {
    if (s_.levels.empty()) return;
    const auto milestone = [&](const detail::RowChange& c) {
      return plainest_whole(c.after + 1 - s_.warmup, c.at - s_.warmup);
    };
    // gamma^k at the k-th drop: k times gamma's rounding.
    const auto gamma = [&](size_t drops) {
      const double within = tolerance_ / (4.0 * static_cast<double>(drops));
      return format_number(plainest_near(s_.levels.front().rate / s_.largest, within));
    };
    add("step(" + peak_ + warmup_ + ", every=" + whole(milestone(s_.levels.front())) + ", gamma=" + gamma(1) + ")");
    if (s_.levels.size() < 2) return;
    std::string milestones;
    for (const auto& level : s_.levels) milestones += (milestones.empty() ? "" : ", ") + whole(milestone(level));
    add("multistep(" + peak_ + warmup_ + ", milestones=[" + milestones + "], gamma=" + gamma(s_.levels.size()) + ")");
  }

  // Where the rate climbs again after its peak: CosineAnnealingWarmRestarts (its first restart gives the period,
  // the second T_mult, the second cycle's top the peak's decay), Hugging Face's equal cycles, a cosine of more cycles,
  // and CyclicLR (its rise from the start is the warmup read, its fall ends at the row before the climb).
  void cycles() {
    const detail::RowChange& first = s_.climbs.front();
    const int64_t period = plainest_whole(first.after + 1 - s_.warmup, first.at - s_.warmup);
    if (period >= 1) {
      std::string restarts = "restarts(" + peak_ + ", period=" + whole(period);
      if (s_.climbs.size() == 2) {
        const auto mult = std::llround(static_cast<double>(s_.climbs[1].at - first.at) / static_cast<double>(period));
        if (mult >= 2) restarts += ", mult=" + whole(mult);
      }
      if (!(relative_difference(s_.second_top, s_.largest) <= tolerance_))
        restarts += ", peak_decay=" + format_number(plainest_near(s_.second_top / s_.largest, tolerance_ / 4));
      add(restarts + warmup_ + ")");
    }
    if (s_.climb_count < detail::kMostLevels)
      add("restarts(" + peak_ + ", cycles=" + whole(static_cast<int64_t>(s_.climb_count) + 1) + warmup_ + ")");
    // Hugging Face's num_cycles c: its first trough, at W + (T - W) / 2c, lies from the row before the climb's last
    // row to the climb's first; the plainest c there.
    const double rest = static_cast<double>(length_ - s_.warmup);
    const double fewest = rest / (2.0 * static_cast<double>(first.at - s_.warmup));
    const double most = rest / (2.0 * static_cast<double>(std::max<int64_t>(first.after - 1 - s_.warmup, 1)));
    const double cycles = detail::plainest_between(fewest, most, fewest);
    add("cosine(" + peak_ + warmup_ + ", cycles=" + format_number(cycles) + ")");
    const int64_t up = s_.warmup, down = first.after - up;
    if (up < 1 || down < 1) return;
    const double floor = s_.warmup_init;
    const std::string sides = ", up=" + whole(up) + (down != up ? ", down=" + whole(down) : "");
    const std::string floor_part = floor > 0 ? ", floor=" + format_number(floor) : "";
    add("triangular(" + peak_ + floor_part + sides + ")");
    add("triangular(" + peak_ + floor_part + sides + ", mode=triangular2)");
    // exp_range scales the swing by gamma^t: its first top (step up) and second (a cycle later) give gamma and the
    // peak it scales.
    const double ratio = (s_.second_top - floor) / (s_.largest - floor);
    if (!(ratio > 0 && ratio < 1)) return;
    const double gamma = plainest_near(std::pow(ratio, 1.0 / static_cast<double>(up + down)),
                                       tolerance_ / (4.0 * static_cast<double>(length_)));
    const double peak = plainest_near(floor + (s_.largest - floor) / std::pow(gamma, static_cast<double>(up)),
                                      tolerance_ / 4);
    add("triangular(peak=" + format_number(peak) + floor_part + sides + ", mode=exp_range, gamma=" +
        format_number(gamma) + ")");
  }

  // A decay whose floor the log shows: one that ended before the run did and holds its floor (Megatron's
  // --lr-decay-iters, Hugging Face's num_stable_steps: the family's own total), or the log's last row (a Trainer's
  // holds the step at the run's end). The floor read, the search finds the decay's other number. The same candidates
  // at every length.
  void ends_at_floor() {
    if (s_.hold) {
      decays(s_.hold->rate, s_.hold->at < length_ ? std::optional<int64_t>(s_.hold->at) : std::nullopt);
    } else if (values_.back() >= 0 && !(relative_difference(values_.back(), s_.largest) <= tolerance_)) {
      decays(values_.back(), std::nullopt);
    }
  }

  // LinearLR ramping up over the whole log (start_factor < end_factor): from the rate of step 0 to the floor the
  // search finds beyond the last row.
  void ramp() {
    if (s_.peak_row + 1 != values_.size() || steps_.front() != 0 || !(values_.front() > 0) || values_.size() < 3)
      return;
    add("linear(peak=" + format_number(plainest_near(values_.front(), tolerance_ / 4)) + ", floor=" +
        format_number(s_.peak) + ")");
  }

  const LogShape& s_;
  const std::vector<int64_t>& steps_;
  const std::vector<double>& values_;
  int64_t length_;
  double tolerance_;
  std::string peak_, warmup_;
  std::vector<std::string> out_;
};

}  // namespace

SeriesFit fit_checked_series(const std::vector<int64_t>& steps, const std::vector<double>& values,
                             std::optional<int64_t> total, double tolerance) {
  if (!(tolerance >= 0.0) || !std::isfinite(tolerance))
    throw std::invalid_argument("tolerance must be a finite number >= 0 (got " + format_number(tolerance) + ")");
  if (total && *total < 1) throw std::invalid_argument("total must be at least 1 (got " + std::to_string(*total) + ")");
  const LogShape shape = detail::read_log_shape(steps, values, tolerance);
  // Without a length given, the run's is the last step + 1, or the last step where the log holds the end value's row
  // (a Trainer logs the step max_steps).
  std::vector<int64_t> lengths = {total ? *total : steps.back() + 1};
  if (!total && steps.back() >= 1) lengths.push_back(steps.back());
  std::vector<std::vector<std::string>> candidates;
  for (const int64_t length : lengths)
    candidates.push_back(Candidates(shape, steps, values, length, tolerance).specs());
  SeriesFit closest;
  bool tried = false;
  // Each length gives as many candidates, in the same order: the i-th of each is one family's (Candidates' choices
  // depend on the log's shape, their numbers on the length).
  for (size_t i = 0; i < candidates.front().size(); ++i) {
    // The family's fit at each length; where both lengths fit (a linear decay to F over T steps is, at whole steps,
    // one to another floor over T + 1), the plainer spec, the longer length among equals.
    std::optional<SeriesFit> best;
    for (size_t l = 0; l < lengths.size(); ++l) {
      const int64_t length = lengths[l];
      std::optional<Schedule> schedule;
      try {
        schedule = parse_schedule(candidates[l][i], length);
      } catch (const SpecError&) {  // a warmup as long as the run, a family that cannot take this length
        continue;
      }
      const SeriesMatch match = match_checked_series(*schedule, steps, values, tolerance);
      // The spec and length the rows follow, where the candidate or one number or the length of it does.
      std::optional<std::pair<std::string, int64_t>> fitted;
      if (match.follows) {
        fitted = {schedule->to_spec(), length};
      } else if (match.mistake == SeriesMistake::OtherSetting) {
        fitted = {match.setting.spec, length};
      } else if ((match.mistake == SeriesMistake::OtherLength && match.left_end_value_at == 0) ||
                 ((match.mistake == SeriesMistake::Faster || match.mistake == SeriesMistake::Slower) &&
                  match.other_length > 0)) {
        fitted = {schedule->to_spec(), match.other_length};
      }
      if (fitted) {
        const Schedule fit = parse_schedule(fitted->first, fitted->second);
        if (!best || fit.to_spec().size() < best->spec.size())
          best = SeriesFit{true, fit.to_spec(), fitted->second, match_checked_series(fit, steps, values, tolerance)};
      } else if (!tried || match.worst < closest.match.worst) {
        closest = {false, schedule->to_spec(), length, match};
        tried = true;
      }
    }
    if (best) return *best;
  }
  return closest;
}

}  // namespace lrkit::schedules
