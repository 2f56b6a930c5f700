#include "lrkit/diagnostics/report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "lrkit/common/numbers.hpp"
#include "lrkit/diagnostics/robust.hpp"

namespace lrkit::diagnostics {

namespace {

constexpr size_t kSmoothingSteps = 5;

struct Series {
  explicit Series(std::string name_, bool low_is_bad_ = false) : name(std::move(name_)), low_is_bad(low_is_bad_) {}
  std::string name;
  bool low_is_bad;            // consistency: drops are the anomaly
  std::vector<double> values;
  std::vector<double> steps;  // each value's step: every analysed step, or those a sparse field is logged at
};

// Whether step `t` logs a field that some steps only may log (RankLog::grad_norm_logged).
bool logged_at(const std::vector<uint8_t>& logged, size_t t) { return logged.empty() || logged[t] != 0; }

double population_std(const double* v, int64_t n) {
  double mean = 0;
  for (int64_t i = 0; i < n; ++i) mean += v[i] / static_cast<double>(n);
  double var = 0;
  for (int64_t i = 0; i < n; ++i) var += (v[i] - mean) * (v[i] - mean) / static_cast<double>(n);
  return std::sqrt(var);
}

MetricSummary summarize(const std::string& name, const std::vector<double>& x, int64_t window) {
  const size_t quarter = std::max<size_t>(1, x.size() / 4);
  return {name, mean_of(x), median(std::vector<double>(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(quarter))),
          median(std::vector<double>(x.end() - static_cast<std::ptrdiff_t>(quarter), x.end())), roughness(x, window)};
}

// The centered median of `width` steps: a change that lasts at least
// width / 2 + 1 steps passes from its first step on; a one-step blip does not.
std::vector<double> centered_median(const std::vector<double>& x, size_t width) {
  std::vector<double> out(x.size());
  const size_t half = width / 2;
  for (size_t t = 0; t < x.size(); ++t) {
    const size_t lo = t >= half ? t - half : 0, hi = std::min(x.size(), t + half + 1);
    out[t] = median(std::vector<double>(x.begin() + static_cast<std::ptrdiff_t>(lo), x.begin() + static_cast<std::ptrdiff_t>(hi)));
  }
  return out;
}

// Steps whose signed z passes the threshold, merged into windows when closer
// than window / 5; a window needs kMinFlaggedSteps of them.
std::vector<FlaggedWindow> group_flags(const Series& s, const std::vector<double>& z, int64_t window, double threshold,
                                       const char* test) {
  const std::vector<double>& steps = s.steps;
  std::vector<FlaggedWindow> windows;
  const auto gap = static_cast<size_t>(std::max<int64_t>(1, window / 5));
  size_t last_flag = 0;
  for (size_t t = 0; t < z.size(); ++t) {
    const double signed_z = s.low_is_bad ? -z[t] : z[t];
    if (std::isnan(signed_z) || signed_z <= threshold) continue;
    if (windows.empty() || t - last_flag > gap) windows.push_back({s.name, steps[t], steps[t], steps[t], z[t], 0, test, std::nullopt});
    auto& w = windows.back();
    w.last_step = steps[t];
    w.flagged_steps += 1;
    if (std::fabs(z[t]) > std::fabs(w.peak_z)) {
      w.peak_z = z[t];
      w.peak_step = steps[t];
    }
    last_flag = t;
  }
  windows.erase(std::remove_if(windows.begin(), windows.end(), [](const FlaggedWindow& w) { return w.flagged_steps < kMinFlaggedSteps; }),
                windows.end());
  return windows;
}

// Dispersions are positive and right-skewed (a std of a few samples), so they
// are scored on a log scale: a jump is then a jump in ratio; exactly 0
// (identical ranks) is nothing to score. Consistency (a cosine) as it is.
std::vector<double> scored_values(const Series& s) {
  std::vector<double> scored = s.values;
  if (!s.low_is_bad)
    for (auto& x : scored) x = x > 0 ? std::log(x) : NAN;
  return scored;
}

// Scale floors: 0.05 in log (5 %) for dispersions, 0.01 for cosines.
double scale_floor(const Series& s) { return s.low_is_bad ? 0.01 : 0.05; }

// The per-step test. A dispersion of a few ranks is noisy from step to step:
// what is scored is its centered 5-step median (the report is offline, so it
// may look ahead), so a finding is a change that lasts, and it still starts at
// its first step.
std::vector<FlaggedWindow> flag_windows(const Series& s, const std::vector<double>& scored, int64_t window,
                                        double jump_z) {
  const auto z = trailing_robust_z(centered_median(scored, kSmoothingSteps), window, window / 2, scale_floor(s));
  return group_flags(s, z, window, jump_z, "step");
}

// The shift test: a change that lasts half a window, scored by shift_z, which
// weighs window / 2 steps after each step against the window before it. A
// moderate change the per-step test misses stands out there (a 1.8x loss
// spread at 8 ranks, z about 4 per step). A finding starts at its peak, the
// change's estimated first step; one that a per-step window of the series
// already covers is left to that window.
std::vector<FlaggedWindow> flag_shifts(const Series& s, const std::vector<double>& scored, int64_t window,
                                       double shift_z_threshold, const std::vector<FlaggedWindow>& per_step) {
  const int64_t horizon = std::max<int64_t>(kSmoothingSteps, window / 2);
  const auto z = shift_z(scored, window, horizon, window / 2, scale_floor(s));
  auto windows = group_flags(s, z, window, shift_z_threshold, "shift");
  const double gap = static_cast<double>(std::max<int64_t>(1, window / 5));
  windows.erase(std::remove_if(windows.begin(), windows.end(),
                               [&](const FlaggedWindow& w) {
                                 return std::any_of(per_step.begin(), per_step.end(), [&](const FlaggedWindow& p) {
                                   return p.metric == w.metric && p.first_step <= w.last_step + gap &&
                                          p.last_step >= w.first_step - gap;
                                 });
                               }),
                windows.end());
  for (auto& w : windows) w.first_step = w.peak_step;
  return windows;
}

// Which rank is most extreme at each step, counted; flagged when the count is
// far above the 1/N a rank gets by chance (binomial z).
void find_outliers(const RankLog& log, size_t first, const std::vector<double>& m, const std::vector<uint8_t>& logged,
                   const std::string& metric, bool lowest, const ReportOptions& o, std::vector<OutlierRank>& out) {
  if (m.empty() || log.ranks < 2) return;
  std::vector<double> counts(static_cast<size_t>(log.ranks), 0.0);
  std::vector<int64_t> extreme;  // per counted step: the most extreme rank
  std::vector<double> counted_steps;
  double steps = 0;
  for (size_t t = first; t < log.size(); ++t) {
    if (!logged_at(logged, t)) continue;
    int64_t best = 0;
    double lo = log.at(m, t, 0), hi = lo;
    bool finite = true;
    for (int64_t r = 0; r < log.ranks; ++r) {
      const double a = log.at(m, t, r);
      finite = finite && std::isfinite(a);
      lo = std::min(lo, a);
      hi = std::max(hi, a);
      if (lowest ? a < log.at(m, t, best) : a > log.at(m, t, best)) best = r;
    }
    // A step with a NaN or Inf is the NaN/Inf section's: here every rank's Inf tied, and rank 0 "won" each such step.
    // Ranks equal up to float noise (identical data): nobody is out.
    if (!finite || hi - lo <= 1e-6 * (std::fabs(hi) + std::fabs(lo))) continue;
    counts[static_cast<size_t>(best)] += 1;
    steps += 1;
    extreme.push_back(best);
    counted_steps.push_back(log.steps[t]);
  }
  if (steps < 10) return;
  const double p = 1.0 / static_cast<double>(log.ranks);
  const auto binomial_z = [&](double c, double n) { return (c - n * p) / std::sqrt(n * p * (1 - p)); };
  for (int64_t r = 0; r < log.ranks; ++r) {
    const double c = counts[static_cast<size_t>(r)];
    const double z = binomial_z(c, steps);
    if (z <= o.outlier_z) continue;
    // Where it starts: the suffix of the run on which this rank's count is most anomalous.
    double suffix = 0, best_z = -1e300, start = counted_steps.front();
    for (size_t i = extreme.size(); i-- > 0;) {
      suffix += extreme[i] == r ? 1.0 : 0.0;
      const double n = static_cast<double>(extreme.size() - i);
      if (n >= 10 && binomial_z(suffix, n) >= best_z) {
        best_z = binomial_z(suffix, n);
        start = counted_steps[i];
      }
    }
    out.push_back({r, log.ranks == 2, start, metric, c / steps, p, z});
  }
}

// NaN / Inf per rank and series, with the first step.
void find_non_finite(const RankLog& log, size_t first, const std::vector<double>& m, const std::vector<uint8_t>& logged,
                     const std::string& series, std::vector<NonFinite>& out) {
  if (m.empty()) return;
  for (int64_t r = 0; r < log.ranks; ++r) {
    NonFinite found{series, r, 0, 0};
    for (size_t t = first; t < log.size(); ++t)
      if (logged_at(logged, t) && !std::isfinite(log.at(m, t, r)) && found.count++ == 0)
        found.first_step = log.steps[t];
    if (found.count > 0) out.push_back(found);
  }
}

std::string number(double x, const char* format = "%.4g") {
  if (std::isnan(x)) return "n/a";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string step_text(double step) { return "step " + number(step, "%.0f"); }

std::string changed_text(const Resume& resume) {
  if (!resume.changed) return "its settings are not logged";
  return resume.changed->empty() ? "no setting changed" : "changed " + *resume.changed;
}

// The last resume from step `from` to step `to`, if any.
std::optional<double> resume_in(const std::vector<Resume>& resumes, double from, double to) {
  std::optional<double> found;
  for (const auto& resume : resumes)
    if (resume.step >= from && resume.step <= to) found = resume.step;
  return found;
}

// A finding's " at the resume of step N (what it changed)" for the verdict, or "".
std::string at_resume(const Report& r, const std::optional<double>& step) {
  for (const auto& resume : r.resumes)
    if (step && resume.step == *step) return " at the resume of " + step_text(resume.step) + " (" + changed_text(resume) + ")";
  return "";
}

std::string verdict(const Report& r, bool has_grad_norm) {
  std::vector<std::string> findings;
  for (const auto& f : r.non_finite)
    findings.push_back("rank " + std::to_string(f.rank) + "'s " + f.series + " is NaN/Inf from " + step_text(f.first_step) +
                       " (" + std::to_string(f.count) + " step(s))");
  int jumps = 0, drops = 0;
  for (const auto& w : r.windows) (w.metric == "consistency" ? drops : jumps) += 1;
  const bool smooth = !std::isnan(r.loss.roughness) && r.loss.roughness < 0.02;
  if (jumps + drops > 0) {
    const FlaggedWindow& first = r.windows.front();
    const std::string what = std::to_string(jumps) + " dispersion jump(s) and " + std::to_string(drops) +
                             " consistency drop(s), the first from " + step_text(first.first_step) + " (" + first.metric +
                             ")" + at_resume(r, first.resume_step);
    findings.push_back(smooth ? "silent inconsistency: " + what + " while the global loss stayed smooth (roughness " +
                                    number(100 * r.loss.roughness, "%.2f") + " %)"
                              : what);
  }
  std::map<int64_t, std::vector<const OutlierRank*>> by_rank;
  for (const auto& o : r.outliers) by_rank[o.rank].push_back(&o);
  for (const auto& [rank, found] : by_rank) {
    std::string list;
    for (const auto* o : found) list += (list.empty() ? "" : ", ") + o->metric + " from " + step_text(o->first_step);
    findings.push_back(found.front()->pair ? "one of ranks 0 and 1 is a persistent outlier (rank " + std::to_string(rank) +
                                                 " the more extreme: " + list + "; with 2 ranks either may be the odd one)"
                                           : "rank " + std::to_string(rank) + " is a persistent outlier (" + list + ")");
  }
  int loss_spikes = 0, norm_spikes = 0;
  for (const auto& s : r.spikes) (s.series == "loss" ? loss_spikes : norm_spikes) += 1;
  if (loss_spikes + norm_spikes > 0)
    findings.push_back(std::to_string(loss_spikes) + " loss spike(s), " + std::to_string(norm_spikes) +
                       " gradient-norm spike(s), the first at " + step_text(r.spikes.front().step) +
                       at_resume(r, r.spikes.front().resume_step));
  std::string line;
  for (const auto& f : findings) line += (line.empty() ? "" : "; ") + f;
  if (!line.empty()) return line;
  if (r.ranks < 2) {
    return std::string("no worker dispersion to assess with 1 rank; the global loss ") +
           (has_grad_norm ? "and gradient norm have" : "has") + " no spikes or NaN/Inf";
  }
  if (r.window == 0) return "too few steps for trailing statistics; no NaN/Inf and no outlier ranks";
  return "consistent: no dispersion jumps, no consistency drops, no outlier ranks, no spikes, no NaN/Inf";
}

// Names the option as `lrkit diagnose` spells it.
void check_options(const ReportOptions& o) {
  const auto refuse = [](const std::string& option, const std::string& rule, double got) {
    throw RankLogError("option " + option + " must be " + rule + " (got " + format_number(got) + ")");
  };
  if (o.window && *o.window < 4) refuse("--window", ">= 4", static_cast<double>(*o.window));
  if (o.skip && *o.skip < 0) refuse("--skip", ">= 0", static_cast<double>(*o.skip));
  const std::pair<const char*, double> thresholds[] = {
      {"--jump-z", o.jump_z}, {"--shift-z", o.shift_z}, {"--spike-z", o.spike_z}, {"--grad-spike-z", o.grad_spike_z}, {"--outlier-z", o.outlier_z}};
  for (const auto& [option, z] : thresholds)
    if (!(z > 0) || !std::isfinite(z)) refuse(option, "a finite number > 0", z);
}

}  // namespace

// The updates the trainer skipped (an lrkit run log's /train/skipped), each kind counted with its first step: a
// spike or a non-finite loss the trainer stepped over is part of what happened, though no rank's curve shows it.
void note_skipped_updates(const RankLog& log, Report& r) {
  const char* const kinds[] = {"non-finite loss(es)", "loss spike(s)", "gradient-norm spike(s)"};
  int64_t counts[3] = {0, 0, 0}, total = 0;
  double first[3] = {0, 0, 0};
  for (size_t t = 0; t < log.skipped.size() && t < log.size(); ++t) {
    const double code = log.skipped[t];
    if (!(code >= 1 && code <= 3)) continue;  // 0: applied; NaN: a row from before the column existed
    const auto kind = static_cast<size_t>(code) - 1;
    if (counts[kind]++ == 0) first[kind] = log.steps[t];
    ++total;
  }
  if (total == 0) return;
  std::string what;
  for (size_t k = 0; k < 3; ++k)
    if (counts[k] > 0)
      what += (what.empty() ? "" : ", ") + std::to_string(counts[k]) + " " + kinds[k] + " (first at step " + format_number(first[k]) + ")";
  r.notes.push_back("the trainer skipped " + std::to_string(total) + " update(s): " + what);
}

int64_t default_window(int64_t steps) { return std::clamp<int64_t>(steps / 50, 50, 500); }

Report analyze(const RankLog& log, const ReportOptions& o) {
  check_options(o);
  const auto logged = static_cast<int64_t>(log.size());
  const int64_t skip = o.skip.value_or(logged / 10);
  if (skip >= logged)
    throw RankLogError(log.source + ": --skip " + std::to_string(skip) + " leaves none of its " + std::to_string(logged) + " steps");
  const auto first = static_cast<size_t>(skip);
  Report r;
  r.source = log.source;
  r.ranks = log.ranks;
  r.records_sessions = log.records_sessions;
  r.resumes = log.resumes;
  r.steps = logged - skip;
  r.options = o;
  r.skip = skip;
  const int64_t wanted = o.window.value_or(default_window(r.steps));
  r.window = std::min(wanted, r.steps / 2);
  if (r.window < 4) {
    r.window = 0;
    r.notes.push_back(std::to_string(r.steps) + " steps analysed: too few for trailing statistics (no jumps, drops or spikes "
                      "are looked for); NaN/Inf and outlier ranks still are");
  } else if (r.window < wanted) {
    r.notes.push_back(std::to_string(r.steps) + " steps are analysed: the window is shrunk to " +
                      std::to_string(r.window) + " steps (from " + std::to_string(wanted) + ")");
  }
  if (log.ranks < 2)
    r.notes.push_back("1 rank: no worker dispersion, consistency or outlier ranks to assess; spikes and NaN/Inf are looked for");
  const bool has_grad_norm = !log.grad_norm.empty();
  if (!has_grad_norm)
    r.notes.push_back("no gradient norms logged: the loss alone is analysed (no gradient-norm spread, outlier ranks by "
                      "gradient norm or gradient-norm spikes)");
  note_skipped_updates(log, r);
  const int64_t window = std::max<int64_t>(r.window, 4);  // what every step below uses

  std::vector<double> steps(log.steps.begin() + static_cast<std::ptrdiff_t>(first), log.steps.end());
  Series loss("loss"), loss_std("loss_std"), loss_cv("loss_cv"), norm_std("grad_norm_std");
  Series consistency("consistency", true), global_norm("grad_norm");
  const auto n = log.ranks;
  for (size_t t = first; t < log.size(); ++t) {
    const double* l = &log.loss[t * static_cast<size_t>(n)];
    double mean = 0;
    for (int64_t k = 0; k < n; ++k) mean += l[k] / static_cast<double>(n);
    loss.values.push_back(mean);
    loss_std.values.push_back(population_std(l, n));
    loss_cv.values.push_back(mean != 0 ? loss_std.values.back() / std::fabs(mean) : NAN);
    if (has_grad_norm && logged_at(log.grad_norm_logged, t)) {
      const double* g = &log.grad_norm[t * static_cast<size_t>(n)];
      double mean_norm = 0;
      for (int64_t k = 0; k < n; ++k) mean_norm += g[k] / static_cast<double>(n);
      norm_std.values.push_back(population_std(g, n));
      global_norm.values.push_back(log.global_grad_norm.empty() ? mean_norm : log.global_grad_norm[t]);
      norm_std.steps.push_back(log.steps[t]);
    }
    if (!log.cos_pairwise.empty()) {
      consistency.values.push_back(log.cos_pairwise[t]);
      consistency.steps.push_back(log.steps[t]);
    } else if (!log.cos_to_mean.empty() && logged_at(log.cos_to_mean_logged, t)) {
      double c = 0;
      for (int64_t k = 0; k < n; ++k) c += log.at(log.cos_to_mean, t, k) / static_cast<double>(n);
      consistency.values.push_back(c);
      consistency.steps.push_back(log.steps[t]);
    }
  }
  loss.steps = loss_std.steps = loss_cv.steps = steps;
  global_norm.steps = norm_std.steps;
  r.consistency_metric = !log.cos_pairwise.empty() ? "mean pairwise cosine" : !log.cos_to_mean.empty() ? "mean cos_to_mean" : "";
  // A field logged at some steps only is tested over those steps: its window counts them, shrunk to half their
  // number as a short log's is (under 4: no jumps, drops or spikes are looked for in it).
  const auto window_of = [&](const Series& s) {
    const auto values = static_cast<int64_t>(s.values.size());
    return values == static_cast<int64_t>(steps.size()) ? r.window : std::min<int64_t>(r.window, values / 2);
  };
  for (const auto& [name, sparse, s] : {std::make_tuple("gradient norms", &log.grad_norm_logged, &norm_std),
                                        std::make_tuple("cosines", &log.cos_to_mean_logged, &consistency)}) {
    if (sparse->empty() || s->values.size() == steps.size()) continue;
    r.notes.push_back(std::string(name) + " are logged at " + std::to_string(s->values.size()) + " of the " +
                      std::to_string(steps.size()) + " steps analysed: " +
                      (window_of(*s) >= 4 ? "their tests run over those steps, the window counting " +
                                                std::to_string(window_of(*s)) + " of them"
                                          : std::string("too few for trailing statistics (no jumps, drops or spikes "
                                                        "are looked for in them)")));
  }

  r.loss = summarize("loss", loss.values, window);
  for (const Series* s : {&loss_std, &loss_cv, &norm_std, &consistency}) {
    if (s->values.empty()) continue;  // not logged (or only in the steps skipped)
    const int64_t series_window = window_of(*s);
    r.dispersion.push_back(summarize(s->name, s->values, std::max<int64_t>(series_window, 4)));
    if (n < 2 || series_window < 4) continue;  // one worker: nothing disperses; too few steps for a window
    if (s->name == "loss_cv") continue;  // loss_std already covers it; flagging both doubles every window
    const auto scored = scored_values(*s);
    const auto w = flag_windows(*s, scored, series_window, o.jump_z);
    // Only the loss spread: in healthy runs the gradient-norm spread and the consistency shift with the phase of
    // training (shift z up to 7.0 and -6.9 over the calibration runs' steps 70-155 of 400), the loss spread did not
    // (at most 4.6).
    const auto shifts =
        s->name == "loss_std" ? flag_shifts(*s, scored, series_window, o.shift_z, w) : std::vector<FlaggedWindow>{};
    r.windows.insert(r.windows.end(), w.begin(), w.end());
    r.windows.insert(r.windows.end(), shifts.begin(), shifts.end());
  }
  std::sort(r.windows.begin(), r.windows.end(),
            [](const FlaggedWindow& a, const FlaggedWindow& b) { return a.first_step < b.first_step; });
  for (auto& w : r.windows) w.resume_step = resume_in(r.resumes, w.first_step - static_cast<double>(kSmoothingSteps), w.last_step);

  find_outliers(log, first, log.loss, {}, "loss", false, o, r.outliers);
  find_outliers(log, first, log.grad_norm, log.grad_norm_logged, "grad_norm", false, o, r.outliers);
  find_outliers(log, first, log.cos_to_mean, log.cos_to_mean_logged, "cos_to_mean", true, o, r.outliers);

  find_non_finite(log, first, log.loss, {}, "loss", r.non_finite);
  find_non_finite(log, first, log.grad_norm, log.grad_norm_logged, "grad_norm", r.non_finite);
  find_non_finite(log, first, log.cos_to_mean, log.cos_to_mean_logged, "cos_to_mean", r.non_finite);

  for (const Series* s : {&loss, &global_norm}) {
    const int64_t series_window = window_of(*s);
    if (s->values.empty() || series_window < 4) continue;  // no gradient norms logged; too few steps
    const double level = std::fabs(median(s->values));
    const auto z = trailing_robust_z(s->values, series_window, series_window / 2, 1e-3 * (level > 0 ? level : 1.0));
    for (size_t t = 0; t < z.size(); ++t)
      if (!std::isnan(z[t]) && z[t] > (s->name == "loss" ? o.spike_z : o.grad_spike_z))
        r.spikes.push_back({s->name, s->steps[t], s->values[t], z[t],
                            resume_in(r.resumes, s->steps[t] - static_cast<double>(kSmoothingSteps - 1), s->steps[t])});
  }
  r.verdict = verdict(r, has_grad_norm);
  return r;
}

std::string format_text(const Report& r) {
  std::ostringstream out;
  out << "lrkit diagnose: " << r.source << "\n"
      << r.ranks << " rank(s), " << r.steps << " steps analysed (first " << r.skip << " skipped)\n";
  for (const auto& note : r.notes) out << "note: " << note << "\n";
  out << "\n";
  out << "global loss: mean " << number(r.loss.mean) << ", first quarter " << number(r.loss.early) << ", last quarter "
      << number(r.loss.late) << ", roughness " << number(100 * r.loss.roughness, "%.2f") << " %\n";
  out << "worker dispersion (mean / first quarter -> last quarter / roughness):\n";
  for (const auto& m : r.dispersion)
    out << "  " << m.name << (m.name == "consistency" ? " (" + r.consistency_metric + ")" : "") << ": " << number(m.mean)
        << " / " << number(m.early) << " -> " << number(m.late) << " / " << number(100 * m.roughness, "%.1f") << " %\n";
  out << "\nthresholds: " << (r.window > 0 ? "robust z over the trailing " + std::to_string(r.window) + " steps" : std::string("(no trailing statistics)"))
      << " (median, 1.4826 MAD); jump or drop |z| > " << r.options.jump_z << ", loss-spread shift z > " << r.options.shift_z
      << " (the median of the next " << std::max<int64_t>(kSmoothingSteps, r.window / 2)
      << " steps against the trailing window's), loss spike z > " << r.options.spike_z << ", gradient-norm spike z > " << r.options.grad_spike_z
      << ", outlier rank binomial z > " << r.options.outlier_z << "\n";
  if (r.records_sessions) {
    out << "resumes: " << (r.resumes.empty() ? "none" : "") << "\n";
    for (const auto& resume : r.resumes) out << "  " << step_text(resume.step) << ": " << changed_text(resume) << "\n";
  }
  out << "flagged windows: " << (r.windows.empty() ? "none" : "") << "\n";
  for (const auto& w : r.windows)
    out << "  " << (w.test == "shift" ? "from step " + number(w.first_step, "%.0f")
                                      : "steps " + number(w.first_step, "%.0f") + "-" + number(w.last_step, "%.0f"))
        << ": " << w.metric
        << (w.metric == "consistency" ? " drop" : " jump") << (w.test == "shift" ? " (lasting shift)" : "") << ", peak z "
        << number(w.peak_z, "%.1f") << " at step " << number(w.peak_step, "%.0f")
        << (w.resume_step ? ", at the resume of " + step_text(*w.resume_step) : std::string()) << "\n";
  out << "outlier ranks: " << (r.outliers.empty() ? "none" : "") << "\n";
  for (const auto& o : r.outliers)
    out << "  rank " << o.rank << (o.pair ? " (or rank " + std::to_string(1 - o.rank) + ": 2 ranks mirror each other)" : "")
        << " from step " << number(o.first_step, "%.0f") << ": most extreme " << o.metric << " on " << number(100 * o.fraction, "%.0f") << " % of steps (chance "
        << number(100 * o.expected, "%.0f") << " %), z " << number(o.z, "%.1f") << "\n";
  out << "NaN/Inf: " << (r.non_finite.empty() ? "none" : "") << "\n";
  for (const auto& f : r.non_finite)
    out << "  rank " << f.rank << " " << f.series << ": from step " << number(f.first_step, "%.0f") << ", " << f.count << " step(s)\n";
  out << "spikes: " << (r.spikes.empty() ? "none" : "") << "\n";
  for (const auto& s : r.spikes)
    out << "  step " << number(s.step, "%.0f") << ": " << s.series << " " << number(s.value) << " (z " << number(s.z, "%.1f")
        << ")" << (s.resume_step ? ", at the resume of " + step_text(*s.resume_step) : std::string()) << "\n";
  out << "\nverdict: " << r.verdict << "\n";
  return out.str();
}

std::string format_json(const Report& r) {
  std::ostringstream out;
  auto metric = [&](const MetricSummary& m) {
    out << "{\"name\": " << json_string(m.name) << ", \"mean\": " << json_number(m.mean) << ", \"early\": " << json_number(m.early)
        << ", \"late\": " << json_number(m.late) << ", \"roughness\": " << json_number(m.roughness) << "}";
  };
  out << "{\"source\": " << json_string(r.source) << ", \"ranks\": " << r.ranks << ", \"steps\": " << r.steps
      << ", \"thresholds\": {\"window\": " << r.window << ", \"jump_z\": " << json_number(r.options.jump_z)
      << ", \"shift_z\": " << json_number(r.options.shift_z)
      << ", \"spike_z\": " << json_number(r.options.spike_z) << ", \"grad_spike_z\": " << json_number(r.options.grad_spike_z)
      << ", \"outlier_z\": " << json_number(r.options.outlier_z)
      << ", \"skip\": " << r.skip << "}, \"consistency_metric\": " << json_string(r.consistency_metric)
      << ", \"loss\": ";
  metric(r.loss);
  out << ", \"dispersion\": [";
  for (size_t i = 0; i < r.dispersion.size(); ++i) {
    out << (i ? ", " : "");
    metric(r.dispersion[i]);
  }
  out << "], \"windows\": [";
  for (size_t i = 0; i < r.windows.size(); ++i) {
    const auto& w = r.windows[i];
    out << (i ? ", " : "") << "{\"metric\": " << json_string(w.metric) << ", \"first_step\": " << json_number(w.first_step)
        << ", \"last_step\": " << json_number(w.last_step) << ", \"peak_step\": " << json_number(w.peak_step)
        << ", \"peak_z\": " << json_number(w.peak_z) << ", \"flagged_steps\": " << w.flagged_steps
        << ", \"test\": " << json_string(w.test)
        << ", \"resume_step\": " << (w.resume_step ? json_number(*w.resume_step) : std::string("null")) << "}";
  }
  out << "], \"resumes\": ";
  if (r.records_sessions) {
    out << "[";
    for (size_t i = 0; i < r.resumes.size(); ++i)
      out << (i ? ", " : "") << "{\"step\": " << json_number(r.resumes[i].step)
          << ", \"changed\": " << (r.resumes[i].changed ? json_string(*r.resumes[i].changed) : std::string("null")) << "}";
    out << "]";
  } else {
    out << "null";  // not known: a log that records no sessions
  }
  out << ", \"outliers\": [";
  for (size_t i = 0; i < r.outliers.size(); ++i) {
    const auto& o = r.outliers[i];
    out << (i ? ", " : "") << "{\"rank\": " << o.rank << ", \"pair\": " << (o.pair ? "true" : "false")
        << ", \"first_step\": " << json_number(o.first_step) << ", \"metric\": " << json_string(o.metric)
        << ", \"fraction\": " << json_number(o.fraction) << ", \"expected\": " << json_number(o.expected)
        << ", \"z\": " << json_number(o.z) << "}";
  }
  out << "], \"spikes\": [";
  for (size_t i = 0; i < r.spikes.size(); ++i) {
    const auto& s = r.spikes[i];
    out << (i ? ", " : "") << "{\"series\": " << json_string(s.series) << ", \"step\": " << json_number(s.step)
        << ", \"value\": " << json_number(s.value) << ", \"z\": " << json_number(s.z)
        << ", \"resume_step\": " << (s.resume_step ? json_number(*s.resume_step) : std::string("null")) << "}";
  }
  out << "], \"non_finite\": [";
  for (size_t i = 0; i < r.non_finite.size(); ++i) {
    const auto& f = r.non_finite[i];
    out << (i ? ", " : "") << "{\"series\": " << json_string(f.series) << ", \"rank\": " << f.rank
        << ", \"first_step\": " << json_number(f.first_step) << ", \"count\": " << f.count << "}";
  }
  out << "], \"notes\": [";
  for (size_t i = 0; i < r.notes.size(); ++i) out << (i ? ", " : "") << json_string(r.notes[i]);
  out << "], \"verdict\": " << json_string(r.verdict) << "}\n";
  return out.str();
}

}  // namespace lrkit::diagnostics
