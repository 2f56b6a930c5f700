// The offline report on synthetic per-rank logs whose anomalies are known.
#include "lrkit/diagnostics/report.hpp"

#include <gtest/gtest.h>

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <sstream>

#include "lrkit/common/numbers.hpp"

namespace lrkit::diagnostics {
namespace {

// A smoothly falling loss with per-rank noise of `spread`, cosines around 0.5.
RankLog synthetic(int64_t ranks, int64_t steps, uint64_t seed = 3) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise;
  RankLog log;
  log.source = "synthetic";
  log.ranks = ranks;
  for (int64_t t = 0; t < steps; ++t) {
    log.steps.push_back(static_cast<double>(t));
    const double level = 2.0 + 1.0 * std::exp(-static_cast<double>(t) / 200.0);
    for (int64_t k = 0; k < ranks; ++k) {
      log.loss.push_back(level + 0.02 * noise(rng));
      log.grad_norm.push_back(1.0 + 0.05 * noise(rng));
      log.cos_to_mean.push_back(0.5 + 0.02 * noise(rng));
    }
  }
  return log;
}

double& cell(RankLog& log, std::vector<double>& m, int64_t step, int64_t rank) {
  return m[static_cast<size_t>(step * log.ranks + rank)];
}

TEST(Report, AnOptionOutOfRangeIsNamedWithItsValue) {
  const auto log = synthetic(2, 50);
  const auto refusal = [&](const ReportOptions& o) {
    try {
      analyze(log, o);
    } catch (const RankLogError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  ReportOptions o;
  o.window = 3;
  EXPECT_EQ(refusal(o), "option --window must be >= 4 (got 3)");
  o = ReportOptions();
  o.skip = -1;
  EXPECT_EQ(refusal(o), "option --skip must be >= 0 (got -1)");
  o = ReportOptions();
  o.spike_z = std::nan("");
  EXPECT_EQ(refusal(o), "option --spike-z must be a finite number > 0 (got nan)");
  o = ReportOptions();
  o.outlier_z = INFINITY;
  EXPECT_EQ(refusal(o), "option --outlier-z must be a finite number > 0 (got inf)");
  o = ReportOptions();
  o.grad_spike_z = 0;
  EXPECT_EQ(refusal(o), "option --grad-spike-z must be a finite number > 0 (got 0)");
  o = ReportOptions();
  o.shift_z = -1;
  EXPECT_EQ(refusal(o), "option --shift-z must be a finite number > 0 (got -1)");
}

TEST(Report, AHealthyRunIsConsistent) {
  const auto r = analyze(synthetic(4, 600));
  EXPECT_TRUE(r.windows.empty());
  EXPECT_TRUE(r.outliers.empty());
  EXPECT_TRUE(r.spikes.empty());
  EXPECT_EQ(r.verdict.rfind("consistent", 0), 0u) << r.verdict;
  EXPECT_LT(r.loss.roughness, 0.01);
  EXPECT_EQ(r.consistency_metric, "mean cos_to_mean");
}

TEST(Report, ADispersionJumpUnderASmoothGlobalLossIsASilentInconsistency) {
  auto log = synthetic(4, 600);
  // Steps 300-319: ranks drift apart symmetrically; the mean (global) loss does not move.
  for (int64_t t = 300; t < 320; ++t)
    for (int64_t k = 0; k < 4; ++k) cell(log, log.loss, t, k) += (k % 2 == 0 ? 0.3 : -0.3);
  for (int64_t t = 400; t < 410; ++t)
    for (int64_t k = 0; k < 4; ++k) cell(log, log.cos_to_mean, t, k) = 0.1;
  const auto r = analyze(log);
  ASSERT_GE(r.windows.size(), 2u);
  bool jump = false, drop = false;
  for (const auto& w : r.windows) {
    if (w.metric == "loss_std" && w.first_step == 300 && w.last_step >= 310) jump = true;
    if (w.metric == "consistency" && w.first_step == 400) drop = true;
  }
  EXPECT_TRUE(jump && drop) << format_text(r);
  EXPECT_TRUE(r.spikes.empty()) << "the global loss did not move";
  EXPECT_EQ(r.verdict.rfind("silent inconsistency", 0), 0u) << r.verdict;
  EXPECT_NE(r.verdict.find("the first from step 300 (loss_std)"), std::string::npos) << r.verdict;
}

TEST(Report, AJumpWhereTheRunWasResumedSaysSoAndWhatTheResumeChanged) {
  auto log = synthetic(4, 600);
  for (int64_t t = 300; t < 320; ++t)
    for (int64_t k = 0; k < 4; ++k) cell(log, log.loss, t, k) += (k % 2 == 0 ? 0.3 : -0.3);
  log.records_sessions = true;
  log.resumes = {{150, ""}, {302, "train.accumulation = 1 -> 4"}};
  const auto r = analyze(log);
  ASSERT_FALSE(r.windows.empty()) << format_text(r);
  EXPECT_EQ(r.windows.front().resume_step, std::optional<double>(302)) << "within the window: a few steps late";
  EXPECT_NE(r.verdict.find("the first from step 300 (loss_std) at the resume of step 302 (changed train.accumulation = 1 "
                           "-> 4)"), std::string::npos) << r.verdict;
  const std::string text = format_text(r);
  EXPECT_NE(text.find("resumes: \n  step 150: no setting changed\n  step 302: changed train.accumulation = 1 -> 4\n"),
            std::string::npos) << text;
  EXPECT_NE(text.find(", at the resume of step 302\n"), std::string::npos) << text;
  std::istringstream json(format_json(r));
  boost::property_tree::ptree tree;
  boost::property_tree::read_json(json, tree);
  EXPECT_EQ(tree.get_child("resumes").size(), 2u);
  EXPECT_EQ(tree.get_child("resumes").back().second.get<std::string>("changed"), "train.accumulation = 1 -> 4");
  EXPECT_EQ(tree.get_child("windows").front().second.get<double>("resume_step"), 302);

  // A resume away from the jump explains nothing; a log that records no sessions lists none.
  log.resumes = {{150, ""}, {330, "train.threads = 2 -> 1"}};
  const auto apart = analyze(log);
  ASSERT_FALSE(apart.windows.empty());
  EXPECT_FALSE(apart.windows.front().resume_step.has_value()) << format_text(apart);
  EXPECT_EQ(apart.verdict.find("resume"), std::string::npos) << apart.verdict;
  log.resumes = {{302, std::nullopt}};  // a DispersionHook's log: the loop's settings are not known
  const auto unknown = analyze(log);
  EXPECT_NE(format_text(unknown).find("resumes: \n  step 302: its settings are not logged\n"), std::string::npos)
      << format_text(unknown);
  EXPECT_NE(unknown.verdict.find("at the resume of step 302 (its settings are not logged)"), std::string::npos)
      << unknown.verdict;
  log.records_sessions = false;
  log.resumes.clear();
  EXPECT_EQ(format_text(analyze(log)).find("resumes:"), std::string::npos);
  std::istringstream none(format_json(analyze(log)));
  boost::property_tree::read_json(none, tree);
  EXPECT_EQ(tree.get<std::string>("resumes"), "null");
}

TEST(Report, APersistentlyWorseRankIsNamed) {
  auto log = synthetic(4, 400);
  for (int64_t t = 0; t < 400; ++t) cell(log, log.loss, t, 2) += 0.02;  // one noise sigma, every step
  const auto r = analyze(log);
  ASSERT_EQ(r.outliers.size(), 1u) << format_text(r);
  EXPECT_EQ(r.outliers[0].rank, 2);
  EXPECT_EQ(r.outliers[0].metric, "loss");
  EXPECT_GT(r.outliers[0].fraction, 0.5);
  EXPECT_NE(r.verdict.find("rank 2 is a persistent outlier (loss from step 40)"), std::string::npos) << r.verdict;  // 10 % skipped
}

TEST(Report, LossAndGradientNormSpikesAreFound) {
  auto log = synthetic(2, 400);
  for (int64_t k = 0; k < 2; ++k) cell(log, log.loss, 250, k) += 1.0;
  for (int64_t k = 0; k < 2; ++k) cell(log, log.grad_norm, 300, k) *= 20.0;
  const auto r = analyze(log);
  ASSERT_EQ(r.spikes.size(), 2u) << format_text(r);
  EXPECT_EQ(r.spikes[0].series, "loss");
  EXPECT_EQ(r.spikes[0].step, 250);
  EXPECT_EQ(r.spikes[1].series, "grad_norm");
  EXPECT_EQ(r.spikes[1].step, 300);
  EXPECT_FALSE(r.spikes[0].resume_step.has_value());

  // A spike in the 5 steps from a resume comes with it (an optimizer state the resumed loop did not restore, say);
  // one 5 steps later does not.
  log.records_sessions = true;
  log.resumes = {{247, std::nullopt}, {295, ""}};
  const auto resumed = analyze(log);
  ASSERT_EQ(resumed.spikes.size(), 2u) << format_text(resumed);
  EXPECT_EQ(resumed.spikes[0].resume_step, std::optional<double>(247));
  EXPECT_FALSE(resumed.spikes[1].resume_step.has_value());
  EXPECT_NE(format_text(resumed).find("  step 250: loss "), std::string::npos) << format_text(resumed);
  EXPECT_NE(format_text(resumed).find("), at the resume of step 247\n"), std::string::npos) << format_text(resumed);
  EXPECT_NE(resumed.verdict.find("the first at step 250 at the resume of step 247 (its settings are not logged)"),
            std::string::npos) << resumed.verdict;
}

TEST(Report, IdenticalRanksHaveZeroDispersionAndNoFindings) {
  auto log = synthetic(3, 300);
  for (int64_t t = 0; t < 300; ++t)
    for (int64_t k = 1; k < 3; ++k) {
      cell(log, log.loss, t, k) = cell(log, log.loss, t, 0);
      cell(log, log.grad_norm, t, k) = cell(log, log.grad_norm, t, 0);
      cell(log, log.cos_to_mean, t, k) = 1.0 - 1e-7 * static_cast<double>(k);  // float noise around 1
      cell(log, log.cos_to_mean, t, 0) = 1.0;
    }
  const auto r = analyze(log);
  EXPECT_EQ(r.dispersion[0].mean, 0.0);
  EXPECT_TRUE(r.windows.empty()) << format_text(r);
  EXPECT_TRUE(r.outliers.empty()) << format_text(r);
}

TEST(Report, AnOutlierSaysWhereItStartsAndTwoRanksAreNamedAsAPair) {
  auto log = synthetic(4, 400);
  for (int64_t t = 200; t < 400; ++t) cell(log, log.loss, t, 3) += 0.04;
  auto r = analyze(log);
  ASSERT_EQ(r.outliers.size(), 1u) << format_text(r);
  EXPECT_NEAR(r.outliers[0].first_step, 200, 15) << format_text(r);
  EXPECT_FALSE(r.outliers[0].pair);

  auto pair = synthetic(2, 400);
  for (int64_t t = 0; t < 400; ++t) cell(pair, pair.loss, t, 1) += 0.03;
  r = analyze(pair);
  ASSERT_EQ(r.outliers.size(), 1u) << format_text(r);
  EXPECT_TRUE(r.outliers[0].pair);
  EXPECT_EQ(r.verdict.rfind("one of ranks 0 and 1 is a persistent outlier (rank 1 the more extreme: loss from step 40;", 0), 0u)
      << r.verdict;
}

TEST(Report, AOneStepBlipIsNotAFindingButAFiveStepDivergenceIs) {
  auto log = synthetic(4, 600);
  for (int64_t k = 0; k < 4; ++k) cell(log, log.loss, 300, k) += (k % 2 == 0 ? 0.3 : -0.3);  // one step
  EXPECT_TRUE(analyze(log).windows.empty()) << format_text(analyze(log));
  for (int64_t t = 450; t < 455; ++t)
    for (int64_t k = 0; k < 4; ++k) cell(log, log.loss, t, k) += (k % 2 == 0 ? 0.3 : -0.3);  // five steps
  const auto r = analyze(log);
  ASSERT_EQ(r.windows.size(), 1u) << format_text(r);
  EXPECT_EQ(r.windows[0].first_step, 450);
}

TEST(Report, NanOrInfIsAFindingWithItsFirstStep) {
  auto log = synthetic(4, 300);
  for (int64_t t = 200; t < 205; ++t) cell(log, log.loss, t, 1) = std::nan("");
  cell(log, log.grad_norm, 250, 2) = INFINITY;
  const auto r = analyze(log);
  ASSERT_EQ(r.non_finite.size(), 2u) << format_text(r);
  EXPECT_EQ(r.verdict.rfind("rank 1's loss is NaN/Inf from step 200 (5 step(s)); rank 2's grad_norm is NaN/Inf from step 250 (1 step(s))", 0), 0u)
      << r.verdict;
  EXPECT_NE(format_text(r).find("NaN/Inf: \n  rank 1 loss: from step 200, 5 step(s)"), std::string::npos) << format_text(r);
}

// Every rank's loss Inf from step 100 tied at each step, and rank 0, first in the tie, was "most extreme" on all of
// them: a persistent outlier beside the NaN/Inf finding. One rank alone gone Inf is that finding too, not an outlier.
TEST(Report, NonFiniteStepsAreTheNanInfFindingsNotAnOutliersCount) {
  for (const int64_t gone : {-1, 2}) {  // every rank, or rank 2 alone
    auto log = synthetic(4, 300);
    for (int64_t t = 100; t < 300; ++t)
      for (int64_t k = 0; k < 4; ++k)
        if (gone < 0 || k == gone) cell(log, log.loss, t, k) = INFINITY;
    const auto r = analyze(log);
    EXPECT_TRUE(r.outliers.empty()) << "rank(s) gone Inf: " << gone << "\n" << format_text(r);
    EXPECT_EQ(r.non_finite.size(), gone < 0 ? 4u : 1u) << format_text(r);
    EXPECT_EQ(r.verdict.find("outlier"), std::string::npos) << r.verdict;
  }
}

// A long healthy run: with a 50-step window its own noise crossed z 6 every few ten thousand steps (8 jumps over
// 180,000 steps of 8 ranks), so a long log was always "silent inconsistency". The default window grows with the
// log; a real jump is still found where it starts.
TEST(Report, ALongHealthyLogIsConsistentAndAJumpInItIsStillFound) {
  EXPECT_EQ(default_window(400), 50);
  EXPECT_EQ(default_window(10000), 200);
  EXPECT_EQ(default_window(1000000), 500);
  auto log = synthetic(8, 30000, 11);
  const auto healthy = analyze(log);
  EXPECT_EQ(healthy.window, 500);
  EXPECT_EQ(healthy.verdict.rfind("consistent", 0), 0u) << healthy.verdict;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> noise;
  for (int64_t t = 20000; t < 30000; ++t)  // from step 20000 the ranks' losses spread 3x as wide
    for (int64_t k = 0; k < 8; ++k) cell(log, log.loss, t, k) += 0.0566 * noise(rng);
  const auto jumped = analyze(log);
  ASSERT_FALSE(jumped.windows.empty()) << jumped.verdict;
  EXPECT_EQ(jumped.windows.front().metric, "loss_std");
  EXPECT_GE(jumped.windows.front().first_step, 20000);
  EXPECT_LE(jumped.windows.front().first_step, 20005);
}

// The ranks' losses spread `factor` times as wide from step `from` on.
void widen_loss_spread(RankLog& log, int64_t from, double factor, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> noise;
  const double extra = 0.02 * std::sqrt(factor * factor - 1);  // synthetic()'s spread is 0.02
  for (int64_t t = from; t < static_cast<int64_t>(log.size()); ++t)
    for (int64_t k = 0; k < log.ranks; ++k) cell(log, log.loss, t, k) += extra * noise(rng);
}

// A lasting 1.8x loss spread at 8 ranks moves the 5-step median by z about 4 per step, below the per-step test's 6;
// the shift test finds it, starting near its first step. Over 10 logs the per-step test alone finds few.
TEST(Report, ALastingModerateJumpIsFoundByTheShiftTest) {
  ReportOptions per_step_only;
  per_step_only.shift_z = 1e9;
  int per_step_found = 0, found = 0;
  std::string shift_text, shift_json;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    auto log = synthetic(8, 400, 100 + seed);
    widen_loss_spread(log, 240, 1.8, 200 + seed);
    if (!analyze(log, per_step_only).windows.empty()) ++per_step_found;
    const auto r = analyze(log);
    if (r.windows.size() != 1) continue;
    const auto& w = r.windows.front();
    EXPECT_EQ(w.metric, "loss_std");
    EXPECT_NEAR(w.first_step, 240, 12) << format_text(r);
    ++found;
    if (w.test != "shift") continue;
    EXPECT_GT(w.peak_z, 6);
    EXPECT_EQ(w.first_step, w.peak_step);
    EXPECT_EQ(r.verdict.rfind("silent inconsistency: 1 dispersion jump(s)", 0), 0u) << r.verdict;
    shift_text = format_text(r);
    shift_json = format_json(r);
  }
  EXPECT_LE(per_step_found, 3);
  EXPECT_GE(found, 9);
  EXPECT_NE(shift_text.find("loss_std jump (lasting shift), peak z"), std::string::npos) << shift_text;
  EXPECT_NE(shift_json.find("\"test\": \"shift\""), std::string::npos) << shift_json;
  // A jump the per-step test finds is reported once, by it.
  auto wide = synthetic(8, 400, 100);
  widen_loss_spread(wide, 240, 4.0, 200);
  const auto both = analyze(wide);
  ASSERT_EQ(both.windows.size(), 1u) << format_text(both);
  EXPECT_EQ(both.windows.front().test, "step");
  // Nothing changed, nothing found, over seeds: the shift test on its own (the per-step one off).
  ReportOptions shift_only;
  shift_only.jump_z = 1e9;
  for (uint64_t seed = 30; seed < 40; ++seed) {
    const auto healthy = analyze(synthetic(8, 400, seed), shift_only);
    EXPECT_TRUE(healthy.windows.empty()) << "seed " << seed << "\n" << format_text(healthy);
  }
}

TEST(Report, OneRankOrFewStepsSayWhatCanStillBeAnalysed) {
  auto one = analyze(synthetic(1, 300));
  EXPECT_EQ(one.verdict.rfind("no worker dispersion to assess with 1 rank", 0), 0u) << one.verdict;
  ASSERT_FALSE(one.notes.empty());
  const auto few = analyze(synthetic(3, 6));
  EXPECT_EQ(few.window, 0);
  EXPECT_EQ(few.verdict.rfind("too few steps for trailing statistics", 0), 0u) << few.verdict;
  ASSERT_FALSE(few.notes.empty());
  EXPECT_NE(few.notes[0].find("(no jumps, drops or spikes are looked for); NaN/Inf and outlier ranks still are"),
            std::string::npos) << few.notes[0];
}

// A log of the loss alone (no gradient norms, as many trainers log per rank) gets the report of a full log's loss:
// the same windows, outlier ranks, spikes and NaN/Inf findings, less the gradient norm's, and a note saying so.
TEST(Report, TheLossAloneIsAnalysedAsAFullLogsLossIs) {
  auto full = synthetic(4, 600);
  for (int64_t t = 300; t < 320; ++t)
    for (int64_t k = 0; k < 4; ++k) cell(full, full.loss, t, k) += (k % 2 == 0 ? 0.3 : -0.3);
  for (int64_t k = 0; k < 4; ++k) cell(full, full.loss, 500, k) += 1.0;
  cell(full, full.loss, 550, 1) = NAN;
  for (int64_t t = 0; t < 600; ++t) cell(full, full.grad_norm, t, 3) += 0.05;  // an outlier by gradient norm
  for (int64_t k = 0; k < 4; ++k) cell(full, full.grad_norm, 450, k) *= 20.0;
  for (int64_t t = 200; t < 220; ++t) cell(full, full.grad_norm, t, 0) *= 3.0;
  cell(full, full.grad_norm, 580, 2) = INFINITY;
  RankLog loss_only = full;
  loss_only.grad_norm.clear();
  const auto with_norms = analyze(full), without = analyze(loss_only);
  const auto of_norms = [](const std::string& metric) { return metric.find("grad_norm") != std::string::npos; };
  // The full log has gradient-norm findings of every kind, so that leaving them out is seen.
  const auto count_of_norms = [&](const auto& findings, const auto& metric_of) {
    return std::count_if(findings.begin(), findings.end(), [&](const auto& f) { return of_norms(metric_of(f)); });
  };
  const std::string full_text = format_text(with_norms);
  EXPECT_GE(count_of_norms(with_norms.windows, [](const FlaggedWindow& w) { return w.metric; }), 1) << full_text;
  EXPECT_GE(count_of_norms(with_norms.outliers, [](const OutlierRank& o) { return o.metric; }), 1) << full_text;
  EXPECT_GE(count_of_norms(with_norms.spikes, [](const Spike& s) { return s.series; }), 1) << full_text;
  EXPECT_GE(count_of_norms(with_norms.non_finite, [](const NonFinite& f) { return f.series; }), 1) << full_text;

  // Every finding and dispersion summary, as text; those of the gradient norms left out where `without_norms`.
  const auto describe = [&](const Report& r, bool without_norms) {
    std::vector<std::string> out;
    const auto keep = [&](const std::string& metric) { return !without_norms || !of_norms(metric); };
    const auto n = [](double x) { return format_number(x); };
    for (const auto& w : r.windows)
      if (keep(w.metric))
        out.push_back("window " + w.metric + " " + w.test + " " + n(w.first_step) + "-" + n(w.last_step) + " peak " +
                      n(w.peak_step) + " z " + n(w.peak_z));
    for (const auto& o : r.outliers)
      if (keep(o.metric)) out.push_back("outlier " + o.metric + " rank " + std::to_string(o.rank) + " z " + n(o.z));
    for (const auto& s : r.spikes)
      if (keep(s.series)) out.push_back("spike " + s.series + " " + n(s.step) + " z " + n(s.z));
    for (const auto& f : r.non_finite)
      if (keep(f.series))
        out.push_back("non-finite " + f.series + " rank " + std::to_string(f.rank) + " " + n(f.first_step));
    for (const auto& m : r.dispersion)
      if (keep(m.name)) out.push_back("dispersion " + m.name + " " + n(m.mean) + " " + n(m.roughness));
    return out;
  };
  const auto got = describe(without, false);
  EXPECT_EQ(got, describe(with_norms, true));
  EXPECT_GE(got.size(), 6u);  // the loss_std window, the loss spike, rank 1's NaN, three dispersions
  EXPECT_EQ(without.loss.mean, with_norms.loss.mean);
  EXPECT_NE(std::find(without.notes.begin(), without.notes.end(),
                      "no gradient norms logged: the loss alone is analysed (no gradient-norm spread, outlier ranks by "
                      "gradient norm or gradient-norm spikes)"),
            without.notes.end());
  EXPECT_EQ(without.verdict.find("grad_norm"), std::string::npos) << without.verdict;
  EXPECT_EQ(without.verdict.rfind("rank 1's loss is NaN/Inf from step 550", 0), 0u) << without.verdict;
  std::istringstream text(format_json(without));
  boost::property_tree::ptree json;
  ASSERT_NO_THROW(boost::property_tree::read_json(text, json));
  EXPECT_EQ(json.get_child("dispersion").size(), 3u);  // loss_std, loss_cv, consistency

  RankLog one = synthetic(1, 300);
  one.grad_norm.clear();
  EXPECT_EQ(analyze(one).verdict,
            "no worker dispersion to assess with 1 rank; the global loss has no spikes or NaN/Inf");
  EXPECT_EQ(analyze(synthetic(1, 300)).verdict,
            "no worker dispersion to assess with 1 rank; the global loss and gradient norm have no spikes or NaN/Inf");
}

// A loop that logs gradient norms and cosines every 3rd step: they are analysed over those steps, as the log of those
// steps alone analyses them (the same windows, outlier ranks, spikes and NaN/Inf), and the steps between are no NaN.
TEST(Report, GradientNormsLoggedAtSomeStepsAreAnalysedOverThoseSteps) {
  auto every = synthetic(4, 1200);
  for (int64_t t = 600; t < 720; ++t) cell(every, every.grad_norm, t, 0) *= 3.0;  // rank 0 drifts off
  for (int64_t k = 0; k < 4; ++k) cell(every, every.grad_norm, 900, k) *= 20.0;  // a spike
  cell(every, every.grad_norm, 990, 2) = INFINITY;
  for (int64_t t = 300; t < 420; ++t) cell(every, every.cos_to_mean, t, 1) -= 0.4;
  RankLog sparse = every, logged_steps = every;
  logged_steps.steps.clear();
  for (auto* m : {&logged_steps.loss, &logged_steps.grad_norm, &logged_steps.cos_to_mean}) m->clear();
  for (int64_t t = 0; t < 1200; ++t) {
    const bool logged = t % 3 == 0;
    sparse.grad_norm_logged.push_back(logged ? 1 : 0);
    sparse.cos_to_mean_logged.push_back(logged ? 1 : 0);
    for (int64_t k = 0; k < 4; ++k) {
      if (!logged) cell(sparse, sparse.grad_norm, t, k) = cell(sparse, sparse.cos_to_mean, t, k) = NAN;
      if (logged) {
        logged_steps.loss.push_back(cell(every, every.loss, t, k));
        logged_steps.grad_norm.push_back(cell(every, every.grad_norm, t, k));
        logged_steps.cos_to_mean.push_back(cell(every, every.cos_to_mean, t, k));
      }
    }
    if (logged) logged_steps.steps.push_back(static_cast<double>(t));
  }
  const Report r = analyze(sparse), alone = analyze(logged_steps);
  // The findings of the gradient norms and cosines, as text.
  const auto findings = [](const Report& report) {
    const auto of_fields = [](const std::string& m) { return m != "loss" && m != "loss_std" && m != "loss_cv"; };
    const auto n = [](double x) { return format_number(x); };
    std::vector<std::string> out;
    for (const auto& w : report.windows)
      if (of_fields(w.metric))
        out.push_back("window " + w.metric + " " + n(w.first_step) + "-" + n(w.last_step) + " z " + n(w.peak_z));
    for (const auto& o : report.outliers)
      if (of_fields(o.metric))
        out.push_back("outlier " + o.metric + " rank " + std::to_string(o.rank) + " z " + n(o.z));
    for (const auto& s : report.spikes)
      if (of_fields(s.series)) out.push_back("spike " + s.series + " " + n(s.step) + " z " + n(s.z));
    for (const auto& f : report.non_finite)
      if (of_fields(f.series))
        out.push_back("non-finite " + f.series + " rank " + std::to_string(f.rank) + " " + n(f.first_step) + " x" +
                      std::to_string(f.count));
    for (const auto& m : report.dispersion)
      if (of_fields(m.name)) out.push_back("dispersion " + m.name + " " + n(m.mean) + " " + n(m.roughness));
    return out;
  };
  const std::vector<std::string> got = findings(r);
  EXPECT_EQ(got, findings(alone));
  const auto has = [&](const std::string& prefix) {
    return std::any_of(got.begin(), got.end(), [&](const std::string& f) { return f.rfind(prefix, 0) == 0; });
  };
  EXPECT_TRUE(has("window grad_norm_std 60")) << format_text(r);
  EXPECT_TRUE(has("window consistency 3")) << format_text(r);
  EXPECT_TRUE(has("outlier grad_norm rank 0")) << format_text(r);
  EXPECT_TRUE(has("spike grad_norm 900")) << format_text(r);
  EXPECT_TRUE(has("non-finite grad_norm rank 2 990 x1")) << "the steps between are not NaN: " << format_text(r);
  EXPECT_EQ(r.steps, 1080);
  const auto noted = [&](const std::string& note) {
    return std::find(r.notes.begin(), r.notes.end(), note) != r.notes.end();
  };
  EXPECT_TRUE(noted("gradient norms are logged at 360 of the 1080 steps analysed: their tests run over those steps, "
                    "the window counting 50 of them")) << format_text(r);
  EXPECT_TRUE(noted("cosines are logged at 360 of the 1080 steps analysed: their tests run over those steps, the "
                    "window counting 50 of them")) << format_text(r);
  // Too few logged steps for a window: no jumps or spikes are looked for in them, NaN/Inf and outliers still are.
  RankLog rare = sparse;
  for (size_t t = 0; t < rare.grad_norm_logged.size(); ++t)
    if (t % 300 != 0 && rare.grad_norm_logged[t]) {
      rare.grad_norm_logged[t] = 0;
      for (int64_t k = 0; k < 4; ++k) cell(rare, rare.grad_norm, static_cast<int64_t>(t), k) = NAN;
    }
  const Report few = analyze(rare);
  EXPECT_NE(std::find(few.notes.begin(), few.notes.end(),
                      "gradient norms are logged at 3 of the 1080 steps analysed: too few for trailing statistics (no "
                      "jumps, drops or spikes are looked for in them)"),
            few.notes.end()) << format_text(few);
  for (const auto& s : few.spikes) EXPECT_NE(s.series, "grad_norm");
  for (const auto& f : few.non_finite) EXPECT_NE(f.series, "grad_norm") << "only NaN between logged steps";
}

TEST(Report, JsonCarriesEverythingAndShortLogsShrinkTheWindow) {
  auto log = synthetic(2, 200);
  for (int64_t k = 0; k < 2; ++k) cell(log, log.loss, 150, k) += 1.0;
  const auto r = analyze(log, ReportOptions{40, 5.0, 6.0, 4.0, int64_t{10}});
  std::istringstream text(format_json(r));
  boost::property_tree::ptree json;
  ASSERT_NO_THROW(boost::property_tree::read_json(text, json)) << format_json(r);
  EXPECT_EQ(json.get<int>("ranks"), 2);
  EXPECT_EQ(json.get<int>("steps"), 190);
  EXPECT_EQ(json.get<int>("thresholds.window"), 40);
  EXPECT_EQ(json.get_child("spikes").size(), 1u);
  EXPECT_EQ(json.get<std::string>("verdict"), r.verdict);
  EXPECT_NE(format_text(r).find("robust z over the trailing 40 steps"), std::string::npos);
  const auto short_log = analyze(synthetic(2, 30));  // 27 steps after the default skip: a window of 13
  EXPECT_EQ(short_log.window, 13);
  EXPECT_NE(short_log.notes.at(0).find("the window is shrunk to 13 steps (from 50)"), std::string::npos) << short_log.notes[0];
  EXPECT_THROW(analyze(synthetic(2, 100), ReportOptions{2, 5, 6, 4, int64_t{0}}), RankLogError);
  EXPECT_THROW(analyze(synthetic(2, 100), ReportOptions{50, 5, 6, 4, int64_t{100}}), RankLogError);
}

// An lrkit run log's /train/skipped: the report counts each kind of skipped update with its first step; rows from
// before the column existed (NaN) and applied updates (0) are not counted.
TEST(Report, TheUpdatesTheTrainerSkippedAreNoted) {
  RankLog log = synthetic(2, 60);
  log.skipped.assign(60, 0.0);
  for (size_t t = 0; t < 5; ++t) log.skipped[t] = NAN;
  log.skipped[12] = 3;
  log.skipped[13] = 3;
  log.skipped[30] = 2;
  log.skipped[41] = 1;
  const Report r = analyze(log);
  const std::string expected = "the trainer skipped 4 update(s): 1 non-finite loss(es) (first at step " + lrkit::format_number(log.steps[41]) +
                               "), 1 loss spike(s) (first at step " + lrkit::format_number(log.steps[30]) +
                               "), 2 gradient-norm spike(s) (first at step " + lrkit::format_number(log.steps[12]) + ")";
  EXPECT_NE(std::find(r.notes.begin(), r.notes.end(), expected), r.notes.end()) << format_text(r);
  EXPECT_NE(format_text(r).find("note: " + expected), std::string::npos);
  log.skipped.assign(60, 0.0);
  for (const auto& note : analyze(log).notes) EXPECT_EQ(note.find("skipped"), std::string::npos) << note;
}

}  // namespace
}  // namespace lrkit::diagnostics
