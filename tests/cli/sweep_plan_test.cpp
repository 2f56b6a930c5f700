// Sweep planning (sweep_plan.hpp): the sweep file, the runs each mode makes,
// where WSD branches fork and where WSD-S checkpoints land (ALGORITHMS.md section 2).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/cli/sweep_plan.hpp"
#include "test_files.hpp"

namespace lrkit::cli {
namespace {

SweepConfig sweep_of(std::vector<SweepSchedule> schedules, std::vector<int64_t> budgets) {
  SweepConfig c;
  c.out = "out/s";
  c.budgets = std::move(budgets);
  c.peaks = {3e-3};
  c.schedules = std::move(schedules);
  return c;
}

bool has_arg(const SweepRun& run, const std::string& arg) { return std::find(run.args.begin(), run.args.end(), arg) != run.args.end(); }

TEST(SweepConfigFile, SectionsModesAndOverrides) {
  const auto path = lrkit::testing::write_text("sweep_ok.cfg",
                                               "[sweep]\ntrain_config = base.cfg\nout = out/x\nbudgets = 100, 200\npeaks = 1e-3, 3e-3\n"
                                               "seeds = 1, 2\nmetric = heldout\njobs = 3\n"
                                               "[schedules]\nwsd = branching: wsd(warmup=10, decay=20%)\ncos = cosine(warmup=5%)\n"
                                               "s = single : wsds(budgets={budgets})\n"
                                               "[train]\nthreads = 1\n[eval]\nbatches = 2\n");
  const auto c = read_sweep_config(path);
  EXPECT_EQ(c.train_config, "base.cfg");
  EXPECT_EQ(c.out, "out/x");
  EXPECT_EQ(c.budgets, (std::vector<int64_t>{100, 200}));
  EXPECT_EQ(c.peaks, (std::vector<double>{1e-3, 3e-3}));
  EXPECT_EQ(c.seeds, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(c.jobs, 3);
  ASSERT_EQ(c.schedules.size(), 3u);  // in file order
  EXPECT_EQ(c.schedules[0].name, "wsd");
  EXPECT_EQ(c.schedules[0].mode, "branching");
  EXPECT_EQ(c.schedules[0].spec, "wsd(warmup=10, decay=20%)");
  EXPECT_EQ(c.schedules[1].mode, "separate");
  EXPECT_EQ(c.schedules[2].mode, "single");
  EXPECT_EQ(c.overrides, (std::vector<std::string>{"--train.threads=1", "--eval.batches=2"}));
}

// The text before the first ':' is a mode where it is a word: a spec's own ':' ({run:NAME}) once made "mode '{run'".
TEST(SweepConfigFile, AColonInsideTheSpecIsNoMode) {
  const auto c = read_sweep_config(lrkit::testing::write_text(
      "sweep_colons.cfg", "[sweep]\nbudgets = 100\n[schedules]\nw = wsd(decay=20%)\nr = {run:w}\ns = single : wsd()\n"));
  ASSERT_EQ(c.schedules.size(), 3u);
  EXPECT_EQ(c.schedules[1].mode, "separate");
  EXPECT_EQ(c.schedules[1].spec, "{run:w}");
  EXPECT_EQ(c.schedules[2].mode, "single");
  EXPECT_EQ(c.schedules[2].spec, "wsd()");
}

TEST(SweepConfigFile, AByteOrderMarkIsSkipped) {
  const auto c = read_sweep_config(
      lrkit::testing::write_text("sweep_bom.cfg", "\xEF\xBB\xBF[sweep]\nbudgets = 100\n[schedules]\na = cosine()\n"));
  EXPECT_EQ(c.budgets, (std::vector<int64_t>{100}));
  ASSERT_EQ(c.schedules.size(), 1u);
}

TEST(SweepConfigFile, SemicolonCommentLinesSetNothing) {
  const auto c = read_sweep_config(lrkit::testing::write_text(
      "sweep_semicolons.cfg", "; budgets = 50\n[sweep]\nbudgets = 100\n[schedules]\n  ; b = linear()\na = cosine()\n"
                              "[train]\n; threads = 2\n"));
  EXPECT_EQ(c.budgets, (std::vector<int64_t>{100}));
  ASSERT_EQ(c.schedules.size(), 1u);
  EXPECT_TRUE(c.overrides.empty());
}

// Each error names the file and, where one line is to blame, the line ("line 0": none is).
TEST(SweepConfigFile, BadFilesNameTheProblemAndItsLine) {
  const std::string schedules = "[schedules]\na = cosine()\n";
  for (const auto& [text, line, needle] : std::vector<std::tuple<std::string, int, std::string>>{
           {"[sweep]\nbudgets = 100\n", 0, "no schedules"},
           {"[sweep]\n" + schedules, 0, "sweep.budgets is required"},
           {"[sweep]\nbudgets = 200, 100\n" + schedules, 2, "increasing (entry 2 = 100)"},
           {"[sweep]\n# budgets\n\n  budgets = 100, x # two\n" + schedules, 4, "sweep.budgets entry 'x'"},
           {"[sweep]\nbudgets = 100\npeaks = -1\n" + schedules, 3, "sweep.peaks entries must be > 0"},
           {"[sweep]\nbudgets = 100\npeaks = 1e-2, 3e-3, 0.01\n" + schedules, 3, "sweep.peaks entry 3 (0.01) repeats entry 1"},
           {"[sweep]\nbudgets = 100\nseeds = 1, 2, 2\n" + schedules, 3, "sweep.seeds entry 3 (2) repeats entry 2"},
           {"[sweep]\nbudgets = 100\nbudget = 3\n" + schedules, 3, "unknown key 'sweep.budget'; did you mean 'budgets' in [sweep]?"},
           {"[sweep]\nbudgets = 100\njobs = 0\n" + schedules, 3, "sweep.jobs must be in [1, 256]"},
           {"[sweep]\nbudgets = 100\njobs = abc\n" + schedules, 3, "the argument ('abc') for option 'sweep.jobs' is invalid"},
           {"[sweep]\nbudgets = 100, 1000000000000\n" + schedules, 2,
            "entry 1000000000000 is above 100000000 steps, the most a sweep plans"},
           {"[sweep]\nbudgets = 100\nbudgets = 200\n" + schedules, 3, "'sweep.budgets' cannot be specified more than once"},
           {"[sweep]\nbudgets = 100\nthis is no key\n" + schedules, 3, "invalid line 'this is no key'"},
           {"[sweep]\nbudgets = 100\nth\xe9s is no key\n" + schedules, 3, "invalid line 'th\\xe9s is no key'"},
           {"[sweep]\nbudgets = 100\nj\xf6" "bs = 2\n" + schedules, 3, "unknown key 'sweep.j\\xf6bs'"},
           {"[sweep]\nbudgets = 100\n[schedules]\na = fast: cosine()\n", 4, "mode 'fast'"},
           {"[sweep]\nbudgets = 100\n[schedules]\na = cosine()\nb = cosine()\na = linear()\n", 6, "'a' is defined twice"},
           {"[sweep]\nbudgets = 100\n" + schedules + "[train]\nsteps = 5\n", 6, "'train.steps' is set by the sweep"},
           // The runs' keys are checked where their line is known, as a file names them.
           {"[sweep]\nbudgets = 100\n" + schedules + "[optim]\nbeta2 = 0.95\nweight_dacay = 0.1\n", 7,
            "unknown key 'optim.weight_dacay'; did you mean 'weight_decay' in [optim]?"},
           {"[sweep]\nbudgets = 100\n" + schedules + "[optim]\nbeta1 = 1.5\n", 6, "optim.beta1 must be in [0, 1) (got 1.5)"},
       }) {
    const auto path = lrkit::testing::write_text("sweep_bad.cfg", text);
    try {
      read_sweep_config(path);
      ADD_FAILURE() << "no error for: " << needle;
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(needle), std::string::npos) << what;
      EXPECT_EQ(what.rfind("sweep file '" + path + "'" + (line > 0 ? " line " + std::to_string(line) : "") + ": ", 0), 0u) << what;
    }
  }
  EXPECT_THROW(read_sweep_config("/nonexistent/sweep.cfg"), std::invalid_argument);
  EXPECT_THROW(read_sweep_config("/dev/zero"), std::invalid_argument);
  const auto utf16 = lrkit::testing::write_text("sweep_utf16.cfg", std::string("\xFF\xFE[\0s\0", 6));
  try {
    read_sweep_config(utf16);
    ADD_FAILURE() << "no error for a UTF-16 sweep file";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "sweep file '" + utf16 + "' is UTF-16 text: save it as UTF-8");
  }
}

// A spec that does not plan is named by the schedule and, read from a file, by its line.
TEST(SweepConfigFile, APlanningErrorNamesTheSchedulesLine) {
  const auto path = lrkit::testing::write_text(
      "sweep_plan_bad.cfg", "[sweep]\nbudgets = 100\npeaks = 1e-3\n[schedules]\ngood = cosine()\n\nbad = cosine(warmup=zz)\n");
  const auto c = read_sweep_config(path);
  ASSERT_EQ(c.schedules.size(), 2u);
  EXPECT_EQ(c.schedules[1].line, 7u);
  try {
    plan_sweep(c, 1);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("sweep file '" + path + "' line 7: schedule 'bad' (cosine(warmup=zz, peak=0.001)): ", 0), 0u)
        << e.what();
  }
}

TEST(SweepSpec, PlaceholdersAndThePeak) {
  EXPECT_EQ(instantiate_spec("cosine(warmup=5%)", 100, {100, 200}, 3e-3, 7), "cosine(warmup=5%, peak=0.003)");
  EXPECT_EQ(instantiate_spec("constant()", 100, {100}, 1e-3, 7), "constant(peak=0.001)");
  EXPECT_EQ(instantiate_spec("join(cosine(peak={peak}), linear(peak={peak}), at=[{budget}])", 100, {100, 200}, 2e-3, 7),
            "join(cosine(peak=0.002), linear(peak=0.002), at=[100])");
  EXPECT_EQ(instantiate_spec("wsds(budgets={budgets}, peak=1)", 200, {100, 200}, std::nan(""), 7), "wsds(budgets=[100, 200], peak=1)");
  EXPECT_EQ(instantiate_spec("refined(norms=r_s{seed}.h5)", 100, {100}, 1e-3, 42), "refined(norms=r_s42.h5, peak=0.001)");
}

TEST(SweepPlan, SeparateRunsOneRunPerBudgetPeakAndSeed) {
  auto c = sweep_of({{"cos", "separate", "cosine(warmup=5%)"}}, {100, 300});
  c.peaks = {1e-3, 3e-3};
  c.seeds = {1, 2};
  c.train_config = "base.cfg";
  c.overrides = {"--train.threads=1"};
  const auto plan = plan_sweep(c, 99);
  ASSERT_EQ(plan.runs.size(), 8u);
  ASSERT_EQ(plan.results.size(), 8u);
  const auto& run = plan.runs.front();
  EXPECT_EQ(run.name, "cos_B100_p0.001_s1");
  EXPECT_EQ(std::vector<std::string>(run.args.begin(), run.args.begin() + 3), (std::vector<std::string>{"--config", "base.cfg", "--train.threads=1"}));
  EXPECT_TRUE(has_arg(run, "--train.steps=100"));
  EXPECT_TRUE(has_arg(run, "--train.seed=1"));
  EXPECT_TRUE(has_arg(run, "--schedule.spec=cosine(warmup=5%, peak=0.001)"));
  EXPECT_TRUE(has_arg(run, "--resume=auto"));
  EXPECT_TRUE(has_arg(run, "--out=out/s/runs/cos_B100_p0.001_s1"));
  for (const auto& r : plan.results) {
    EXPECT_EQ(r.step, r.budget);
    EXPECT_EQ(plan.runs[r.run].steps, r.budget);
  }
  EXPECT_EQ(plan.schedule_steps, (std::vector<int64_t>{4 * 400}));
  EXPECT_EQ(plan.separate_steps, plan.schedule_steps);
  EXPECT_EQ(plan_sweep(sweep_of({{"cos", "separate", "cosine()"}}, {100}), 99).runs[0].seed, 99u) << "default seed";
}

TEST(SweepPlan, TwoSchedulesThatNameOneRunDirectoryAreRefused) {
  auto c = sweep_of({{"x", "separate", "cosine()"}, {"x_B100", "single", "cosine()"}}, {100});
  c.seeds = {1};
  try {
    plan_sweep(c, 1);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "schedules 'x' and 'x_B100' both name run directory 'x_B100_p0.003_s1'; rename one of them");
  }
}

TEST(SweepPlan, WsdBranchesForkWhereTheirDecayStarts) {
  const std::vector<int64_t> budgets = {1000, 2000, 4000};
  const auto plan = plan_sweep(sweep_of({{"wsd", "branching", "wsd(warmup=100, decay=20%, shape=linear)"}}, budgets), 1);
  ASSERT_EQ(plan.runs.size(), 4u);
  const auto& main = plan.runs[0];
  EXPECT_EQ(main.name, "wsd_main_p0.003_s1");
  // Linear decay over D = 20 % of B starts at B - D with the peak itself, so the value first differs one step later.
  EXPECT_EQ(main.milestones, (std::vector<int64_t>{801, 1601, 3201}));
  EXPECT_EQ(main.steps, 3201);
  for (size_t i = 0; i < budgets.size(); ++i) {
    const auto& branch = plan.runs[i + 1];
    EXPECT_EQ(branch.depends_on, 0);
    EXPECT_EQ(branch.steps, budgets[i]);
    EXPECT_EQ(branch.start_step, main.milestones[i]);
    EXPECT_TRUE(has_arg(branch, "--branch-from=out/s/runs/wsd_main_p0.003_s1/checkpoints/step_" +
                                    std::string(10 - std::to_string(main.milestones[i]).size(), '0') + std::to_string(main.milestones[i]) + ".pt"));
    // The branch's schedule equals the main run's up to the fork, then decays.
    const auto b = schedules::parse_schedule(branch.schedule_spec, budgets[i]);
    const auto m = schedules::parse_schedule(main.schedule_spec);
    for (int64_t t = 0; t < branch.start_step; ++t) ASSERT_EQ(b(t), m(t)) << t;
    EXPECT_LT(b(branch.start_step), m(branch.start_step));
    EXPECT_EQ(plan.results[i].step, budgets[i]);
  }
  // Compute: main to the last fork plus every branch's decay, against 7000 for separate runs.
  EXPECT_EQ(plan.schedule_steps[0], 3201 + (1000 - 801) + (2000 - 1601) + (4000 - 3201));
  EXPECT_EQ(plan.separate_steps[0], 7000);
}

TEST(SweepPlan, BranchingNeedsASchedulesThatDecays) {
  EXPECT_THROW(plan_sweep(sweep_of({{"c", "branching", "constant(warmup=10)"}}, {100, 200}), 1), std::invalid_argument);
  EXPECT_THROW(plan_sweep(sweep_of({{"w", "branching", "wsd(total=500)"}}, {100, 200}), 1), std::invalid_argument);
  // A percentage warmup differs per budget from step 1: the branch forks at once, no main checkpoint is reused.
  const auto early = plan_sweep(sweep_of({{"w", "branching", "wsd(warmup=10%, decay=20%)"}}, {100, 200}), 1);
  EXPECT_EQ(early.runs[1].start_step, 1);
}

TEST(SweepPlan, WsdsCheckpointsLandAtEachBudgetPlusTheEarlierDecays) {
  // ALGORITHMS.md's check: budgets 12500/25000/50000, f = 10 % -> checkpoints 12500, 26250, 53750.
  const auto plan = plan_sweep(sweep_of({{"wsds", "single", "wsds(budgets={budgets}, decay=10%, shape=linear)"}}, {12500, 25000, 50000}), 1);
  ASSERT_EQ(plan.runs.size(), 1u);
  EXPECT_EQ(plan.runs[0].milestones, (std::vector<int64_t>{12500, 26250, 53750}));
  EXPECT_EQ(plan.runs[0].steps, 53750);
  EXPECT_TRUE(has_arg(plan.runs[0], "--checkpoint.at=12500,26250,53750"));
  ASSERT_EQ(plan.results.size(), 3u);
  EXPECT_EQ(plan.results[1].budget, 25000);
  EXPECT_EQ(plan.results[1].step, 26250);
  EXPECT_EQ(plan.schedule_steps[0], 53750);  // the compute of WSD with three branches
  EXPECT_EQ(plan.separate_steps[0], 87500);
}

// {run:NAME}: each budget's run reads the log of NAME's run at the same budget, peak and seed, and waits for it.
TEST(SweepPlan, ARunReadsTheLogOfAnotherSchedulesRunAtItsBudgetPeakAndSeed) {
  auto c = sweep_of({{"lin", "separate", "linear(warmup=5%)"}, {"ref", "separate", "refined(norms={run:lin}, norm=l1)"}},
                    {100, 300});
  c.peaks = {1e-3, 3e-3};
  c.out = "out/a sweep";  // a path the spec must quote
  const auto plan = plan_sweep(c, 7);
  ASSERT_EQ(plan.runs.size(), 8u);
  for (size_t i = 0; i < 4; ++i) {
    const SweepRun& source = plan.runs[i];
    const SweepRun& reader = plan.runs[i + 4];
    EXPECT_EQ(source.reads_log_of, -1);
    EXPECT_EQ(reader.reads_log_of, static_cast<int>(i)) << reader.name;
    EXPECT_EQ(reader.depends_on, -1) << "it reads a log, it does not branch";
    EXPECT_EQ(reader.name, "ref" + source.name.substr(3));
    EXPECT_EQ(reader.steps, source.steps);
    EXPECT_EQ(std::count_if(reader.args.begin(), reader.args.end(), [](const std::string& a) { return a.rfind("--branch-from", 0) == 0; }), 0);
  }
  EXPECT_EQ(plan.runs[5].schedule_spec, "refined(norms=\"out/a sweep/runs/lin_B300_p0.001_s7/log.h5\", norm=l1, peak=0.001)");
  EXPECT_EQ(plan.schedule_steps, (std::vector<int64_t>{800, 800}));

  const auto refused = [](const std::vector<SweepSchedule>& schedules) {
    try {
      plan_sweep(sweep_of(schedules, {100}), 1);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const SweepSchedule lin{"lin", "separate", "linear()"};
  EXPECT_EQ(refused({{"ref", "separate", "refined(norms={run:lin})"}, lin}),
            "schedule 'ref' reads {run:lin}: 'lin' must be defined above 'ref' (its runs train first)");
  EXPECT_EQ(refused({lin, {"ref", "separate", "refined(norms={run:lni})"}}), "schedule 'ref' reads {run:lni}: the sweep has no schedule 'lni'");
  EXPECT_EQ(refused({{"ref", "separate", "refined(norms={run:ref})"}}),
            "schedule 'ref' reads {run:ref}: 'ref' must be defined above 'ref' (its runs train first)");
  EXPECT_EQ(refused({{"wsd", "branching", "wsd(decay=20%)"}, {"ref", "separate", "refined(norms={run:wsd})"}}),
            "schedule 'ref' reads {run:wsd}: 'wsd' is branching: only a separate run's log holds its budget's whole history");
  EXPECT_EQ(refused({lin, {"ref", "single", "refined(norms={run:lin})"}}),
            "schedule 'ref' reads {run:lin}: only a separate schedule (one run per budget) can read another run's log");
  EXPECT_EQ(refused({lin, {"cos", "separate", "cosine()"}, {"ref", "separate", "join(refined(norms={run:lin}), refined(norms={run:cos}), at=[50])"}}),
            "schedule 'ref' reads {run:lin}: it also reads {run:cos}, and a run waits for one other run");
  EXPECT_EQ(refused({lin, {"ref", "separate", "refined(norms={run:lin)"}}), "schedule 'ref': '{run:' without its closing '}'");
  // The log is not written when the sweep is planned: the spec's form is checked then, its values when its run starts.
  EXPECT_NE(refused({lin, {"ref", "separate", "refined(norms={run:lin}, nrom=l1)"}}).find("unknown key for refined"), std::string::npos);
}

TEST(SweepPlan, SingleRunsWithoutCheckpointsAreReadAtTheBudgets) {
  const auto plan = plan_sweep(sweep_of({{"cyc", "single", "cyclic(budgets={budgets}, rewarm=10)"},
                                         {"cos", "single", "cosine(warmup=10)"}},
                                        {100, 200, 400}),
                               1);
  ASSERT_EQ(plan.runs.size(), 2u);
  EXPECT_EQ(plan.runs[0].milestones, (std::vector<int64_t>{100, 200, 400}));
  EXPECT_EQ(plan.runs[1].milestones, (std::vector<int64_t>{100, 200, 400}));
  EXPECT_EQ(plan.runs[1].steps, 400);
  EXPECT_THROW(plan_sweep(sweep_of({{"w", "single", "wsds(budgets=[100, 200])"}}, {100, 200, 400}), 1), std::invalid_argument);
  try {
    plan_sweep(sweep_of({{"bad", "separate", "cosine(warmup=200%)"}}, {100}), 1);
    ADD_FAILURE();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("schedule 'bad'"), std::string::npos) << e.what();
  }
}

// Checked where the plan is made, before any run: 3e-3 * 1.01^t passes float32's largest at step 9501, inside
// the run of the larger budget only.
TEST(SweepPlan, AScheduleWhoseRatesOverflowInARunIsRefusedInEveryMode) {
  for (const std::string mode : {"separate", "single"}) {
    try {
      plan_sweep(sweep_of({{"grow", mode, "exponential(gamma=1.01)"}}, {1000, 20000}), 1);
      ADD_FAILURE() << mode;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("schedule 'grow'"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("at step 9501 of 0..20000; a learning rate must be"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(plan_sweep(sweep_of({{"grow", mode, "exponential(gamma=1.01)"}}, {1000, 9500}), 1)) << mode;
  }
}

}  // namespace
}  // namespace lrkit::cli
