// Runs the real `lrkit` binary: outputs, exit codes and one-line errors.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "test_files.hpp"

namespace {

using lrkit::testing::run_lrkit;
int lines(const std::string& s) { return lrkit::testing::count_lines(s); }
auto run(const std::string& args) { return run_lrkit(args); }

TEST(ScheduleCommand, PrintsCsvTsvAndJsonTables) {
  auto r = run("schedule 'linear(peak=1)' --steps 4");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "step,lr\n0,1\n1,0.75\n2,0.5\n3,0.25\n4,0\n");
  r = run("schedule 'linear(peak=1)' --steps 4 --format tsv --every 3");
  EXPECT_EQ(r.out, "step\tlr\n0\t1\n3\t0.25\n4\t0\n");
  r = run("schedule 'linear(peak=1)' -n 2 -f json");
  EXPECT_EQ(r.out, "{\"spec\": \"linear(peak=1)\", \"steps\": 2, \"step\": [0, 1, 2], \"lr\": [1, 0.5, 0]}\n");
}

TEST(ScheduleCommand, AtSummaryAndPlot) {
  EXPECT_EQ(run("schedule 'cosine(peak=2)' --steps 100 --at 50").out, "1\n");
  auto r = run("schedule 'wsds(peak=1e-3, budgets=[12500, 25000, 50000], decay=10%)' --summary");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("checkpoints  12500 26250 53750"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("steps        53750"), std::string::npos);
  r = run("schedule 'wsd(peak=1)' --steps 100 --summary --format json");
  EXPECT_NE(r.out.find("\"decay_start\": 80"), std::string::npos) << r.out;
  r = run("schedule 'cosine(peak=1)' --steps 100 --plot --width 40 --height 10");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(lines(r.out), 12);
  EXPECT_NE(r.out.find('*'), std::string::npos);
}

// 500 cycles of 4 steps are 1000 phases: the text line names the first 8 and the last 2, the JSON lists them all.
TEST(ScheduleCommand, ASummaryOfManyCyclesShowsTheirFirstAndLastPhases) {
  auto r = run("schedule 'triangular(peak=1, up=2)' --steps 2000 --summary");
  EXPECT_EQ(r.code, 0);
  const std::string line = r.out.substr(r.out.find("phases"));
  EXPECT_EQ(line, "phases       ramp[0,2) decay[2,4) ramp[4,6) decay[6,8) ramp[8,10) decay[10,12) ramp[12,14) "
                  "decay[14,16) ... (990 more; --format json lists all 1000) ... ramp[1996,1998) decay[1998,2000)\n");
  r = run("schedule 'triangular(peak=1, up=2)' --steps 2000 --summary --format json");
  EXPECT_EQ(r.code, 0);
  size_t listed = 0;
  for (size_t at = r.out.find("\"kind\""); at != std::string::npos; at = r.out.find("\"kind\"", at + 1)) ++listed;
  EXPECT_EQ(listed, 1000u);
  EXPECT_NE(r.out.find("{\"kind\": \"decay\", \"begin\": 1998, \"end\": 2000}]"), std::string::npos);
  // Eleven phases are all shown: eliding one would save nothing.
  r = run("schedule 'restarts(peak=1, period=10)' --steps 110 --summary");
  EXPECT_NE(r.out.find("decay[90,100) decay[100,110)\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("more"), std::string::npos) << r.out;
}

// --momentum BASE,MAX: the momentum column PyTorch's cycle_momentum gives (its golden cases hold PyTorch's values);
// a schedule that cycles none, a bad range and the outputs that are the rate's alone are refused in one line.
TEST(ScheduleCommand, MomentumAddsTheCycledMomentumColumn) {
  auto r = run("schedule 'triangular(peak=1, up=2)' --steps 4 --momentum 0.8,0.9");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "step,lr,momentum\n0,0,0.9\n1,0.5,0.8500000000000001\n2,1,0.8\n3,0.5,0.8500000000000001\n4,0,0.9\n");
  r = run("schedule 'onecycle(peak=1)' --steps 4 --every 4 --momentum '0.85, 0.95' -f json");
  EXPECT_EQ(r.out, "{\"spec\": \"onecycle(peak=1)\", \"steps\": 4, \"step\": [0, 4], "
                   "\"lr\": [0.040000000000000036, 4e-06], \"momentum\": [0.95, 0.95]}\n");
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {"'cosine(1)' -n 4 --momentum 0.8,0.9", "--momentum: 'cosine(peak=1)' cycles no momentum"},
           {"'onecycle(1)' -n 4 --momentum 0.9", "--momentum takes BASE,MAX with 0 <= BASE <= MAX < 1"},
           {"'onecycle(1)' -n 4 --momentum 0.9,0.8", "(got '0.9,0.8')"},
           {"'onecycle(1)' -n 4 --momentum 0.8,0.9 --summary", "drop --summary"},
           {"'onecycle(1)' -n 4 --momentum 0.8,0.9 --at 2", "drop --at"},
       }) {
    r = run("schedule " + args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(lines(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << args << ": " << r.out;
  }
}

// Whole-number options read as the config files' whole-number keys: 1e2 is 100, 1.5 is refused.
// The plan of a sweep with decay branches: each run's updates, the main run's spec and the updates saved.
TEST(ScheduleCommand, BranchesPlansASweepWithDecayBranches) {
  const std::string spec = "'wsd(peak=3e-3, warmup=50, decay=10%, shape=linear, floor=10%)'";
  auto r = run("schedule " + spec + " --branches 500,1000,2000");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "run,from,to\nmain,0,1801\nB500,451,500\nB1000,901,1000\nB2000,1801,2000\n");
  r = run("schedule " + spec + " --branches '500, 1000' -f tsv");
  EXPECT_EQ(r.out, "run\tfrom\tto\nmain\t0\t901\nB500\t451\t500\nB1000\t901\t1000\n");
  r = run("schedule " + spec + " --branches 500,1000,2000 -f json");
  EXPECT_EQ(r.out,
            "{\"main\": {\"spec\": \"wsd(peak=0.003, floor=10%, decay=10%, shape=linear, warmup=50)\", \"total_steps\": "
            "2000000, \"from\": 0, \"to\": 1801}, \"branches\": [{\"budget\": 500, \"from\": 451, \"to\": 500}, "
            "{\"budget\": 1000, \"from\": 901, \"to\": 1000}, {\"budget\": 2000, \"from\": 1801, \"to\": 2000}], "
            "\"updates\": 2148, \"separate_updates\": 3500}\n");
  for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
           {spec + " --branches 500,x", "--branches entry 'x' is not a whole number of steps"},
           {spec + " --branches 500,500", "--branches: budget 500 is given twice"},
           {spec + " --branches 500 --steps 100", "--branches plans runs of every budget's length: drop --steps"},
           {"'constant(1e-3)' --branches 500", "--branches: schedule 'constant(1e-3)' never departs from the main run"},
           {"'wsd(peak=1e-3, total=900)' --branches 500", "has a length of its own (900 steps)"}}) {
    r = run("schedule " + args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(lines(r.out), 1) << r.out;
    EXPECT_NE(r.out.find(message), std::string::npos) << r.out;
  }
}

TEST(ScheduleCommand, StepCountsTakeExactlyWholeDecimals) {
  const auto r = run("schedule 'cosine(peak=2)' --steps 1e2 --at 5e1");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "1\n");
  EXPECT_EQ(run("schedule 'linear(peak=1)' --steps 4e0 --every 3.0e0").out, run("schedule 'linear(peak=1)' --steps 4 --every 3").out);
  EXPECT_EQ(run("schedule 'cosine(peak=2)' --steps 1.5e0").out,
            "lrkit schedule: the argument ('1.5e0') for option '--steps' is invalid (see lrkit schedule --help)\n");
}

TEST(ScheduleCommand, AtPastTheEndIsRefusedAndAnAbsurdPeakIsNamed) {
  EXPECT_EQ(run("schedule 'cosine(peak=1e-3)' --steps 10 --at 10").out, "0\n");
  auto r = run("schedule 'cosine(peak=1e-3)' --steps 10 --at 1000000000");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "lrkit schedule: --at 1000000000 is past the schedule's end: its steps run 0..10\n");
  r = run("schedule 'cosine(peak=1e30)' --steps 4 --at 0");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "lrkit schedule: warning: the schedule peaks at 1e+30 (step 0); learning rates above 10 rarely train\n1e+30\n");
}

TEST(ScheduleCommand, ARateNoOptimizerCanApplyIsRefusedWhereverTheRunReachesIt) {
  // The whole run is checked, not only the step asked for: --at 3 of a run that overflows at step 9611.
  auto r = run("schedule 'exponential(1e-3, gamma=1.01)' --steps 100000 --at 3");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "lrkit schedule: invalid schedule spec \"exponential(peak=0.001, gamma=1.01)\" at position 0 ('exponential'): "
                   "it is 3.409756963459282e+38 at step 9611 of 0..100000; a learning rate must be a number in "
                   "[0, 3.4028234663852886e+38] (float32's largest)\n");
  r = run("schedule 'exponential(1e-3, gamma=1.01)' --steps 9610 --at 3");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(ScheduleCommand, WritesAnHdf5Table) {
  const auto path = (lrkit::testing::scratch_dir() / "s.h5").string();
  const auto r = run("schedule 'wsds(peak=1, budgets=[10, 20])' --out " + path);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "");
  const auto lr = lrkit::h5::read_series(path, "/schedule/lr");
  EXPECT_EQ(lr.size(), 22u);
  EXPECT_EQ(lrkit::h5::read_series(path, "/schedule/checkpoints"), (std::vector<double>{10, 21}));
}

// --out writes what its name says: a table written to lr.csv was HDF5 bytes that no spreadsheet opens. Each form
// reads back through table(file=...), as `lrkit refine`'s tables do.
TEST(ScheduleCommand, OutWritesTheFormItsNameSays) {
  const std::string spec = "wsds(peak=1, budgets=[10, 20])";
  const auto expected = run("schedule '" + spec + "' --format csv").out;
  for (const std::string name : {"s.csv", "s.tsv", "s.h5"}) {
    const auto path = (lrkit::testing::scratch_dir() / name).string();
    auto r = run("schedule '" + spec + "' --out " + path);
    ASSERT_EQ(r.code, 0) << name << "\n" << r.out;
    EXPECT_EQ(r.out, "") << name;
    const std::string reads = name == "s.h5" ? "table(file=" + path + ", column=/schedule/lr, steps=/schedule/step)" : "table(file=" + path + ")";
    r = run("schedule '" + reads + "' --steps 21 --format csv");
    ASSERT_EQ(r.code, 0) << name << "\n" << r.out;
    EXPECT_EQ(r.out, expected) << name;
  }
  EXPECT_EQ(lrkit::read_text(lrkit::testing::scratch_dir() / "s.csv"), expected) << "every step, in the table's own CSV";
}

// A table the disk refuses (a file size limit; the shell ignores SIGXFSZ for it) is a failure at run time: exit 1 with
// the reason, and the file it was to replace stays whole, in either form.
TEST(ScheduleCommand, ATableTheDiskRefusesExitsOneAndLeavesTheOldFile) {
  const auto dir = lrkit::testing::scratch_dir() / "refused_table";
  lrkit::testing::remove_tree(dir);
  std::filesystem::create_directories(dir);
  for (const std::string name : {"old.h5", "old.csv"}) {
    const auto path = (dir / name).string();
    lrkit::write_text_atomically(path, "the old table\n");
    const auto r = lrkit::testing::run_command("trap '' XFSZ; ulimit -f 64 && exec " + std::string(LRKIT_BINARY) +
                                               " schedule 'cosine(peak=1)' --steps 100000 --out " + path);
    EXPECT_EQ(r.code, 1) << name << "\n" << r.out;
    const auto at = r.out.find("lrkit schedule: cannot write ");
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("File too large\n", at), std::string::npos) << r.out;
    EXPECT_EQ(lrkit::read_text(path), "the old table\n");
    EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{}) << name;
  }
}

TEST(ScheduleCommand, BadInputExitsTwoWithOneClearLine) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"schedule 'uba(peak=1e-3, phi=-1)' --steps 100", "'phi' must be > 0 (got -1)"},
      {"schedule 'cosine(peak=1e-3' --steps 100", "expected ')'"},
      {"schedule 'cosine(peak=1e-3)'", "needs the total number of steps"},
      {"schedule 'step(1, every=5)'", "give --steps"},
      {"schedule 'cosine(1)' --steps 0", "--steps must be at least 1"},
      {"schedule 'cosine(1)' --steps abc", "invalid"},
      {"schedule 'cosine(1)' --steps 10 --format xml", "--format must be csv, tsv or json"},
      {"schedule 'cosine(1)' --steps 10 --bogus", "unrecognised option '--bogus' (see lrkit schedule --help)"},
      {"schedule 'cosine(1)' --stpes 10", "unrecognised option '--stpes'; did you mean --steps? (see lrkit schedule --help)"},
      {"schedule 'cosine(1)' --steps 10 --at -3", "--at must be >= 0"},
      {"schedule 'cosine(1)' --steps 10 --plot --width 2", "--width must be in [8, 1000] (got 2)"},
      {"schedule 'cosine(1)' --steps 10 --plot --height 500", "--height must be in [4, 200] (got 500)"},
      {"schedule 'cosine(1)' --steps 1000000000000 --at 5", "--steps is at most 100000000 (got 1000000000000)"},
      {"schedule", "missing SPEC"},
      {"schedule 'cosine(1)' --steps 10 --out /nonexistent-dir/x.h5",
       "cannot write '/nonexistent-dir/x.h5': directory '/nonexistent-dir' does not exist"},
      {"schedule 'cosine(1)' --steps 10 --out /nonexistent-dir/x.csv", "cannot write '/nonexistent-dir/x.csv': directory '/nonexistent-dir' does not exist"},
      {"schedule 'cosine(1)' --steps 10 --out x.json", "--out 'x.json' must end in .h5 (HDF5), .csv or .tsv"},
      {"schedule 'cosine(1)' --steps 10 --out /tmp", "--out '/tmp' must end in"},
  };
  for (const auto& [args, expected] : cases) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << "\n" << r.out;
  }
}

// --out names a pipe (a consumer waiting on it) or a link to /dev/null: the table was written beside it and renamed
// over it, replacing the pipe (the consumer waited on) or, run as root, the system's /dev/null.
TEST(ScheduleCommand, AnOutputThatIsAPipeOrADeviceIsRefusedAndLeftAsItWas) {
  const auto dir = lrkit::testing::scratch_dir() / "schedule_special_out";
  lrkit::testing::remove_tree(dir);
  std::filesystem::create_directories(dir);
  const std::string pipe = (dir / "rates.csv").string();
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  std::filesystem::create_symlink("/dev/null", dir / "rates.h5");
  for (const std::string& path : {pipe, (dir / "rates.h5").string()}) {
    const auto r = run("schedule 'cosine(1)' --steps 10 --out " + path);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out, "lrkit schedule: cannot write '" + path + "': it is not a regular file (a device or pipe), and "
                     "writing the file whole and renaming it into place would replace it: name a file\n");
  }
  EXPECT_TRUE(std::filesystem::is_fifo(pipe));
  EXPECT_TRUE(std::filesystem::is_symlink(dir / "rates.h5"));
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
}

// A table kept on another disk by a link: the link stays, and the file it names holds the new table.
TEST(ScheduleCommand, AnOutputNamedByALinkIsWrittenToTheFileItNames) {
  const auto dir = lrkit::testing::scratch_dir() / "schedule_linked_out";
  lrkit::testing::remove_tree(dir);
  std::filesystem::create_directories(dir / "disk");
  for (const std::string name : {"rates.csv", "rates.h5"}) {
    std::filesystem::create_symlink("disk/" + name, dir / name);
    const auto r = run("schedule 'linear(peak=2)' --steps 2 --out " + (dir / name).string());
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(std::filesystem::is_symlink(dir / name)) << name;
    ASSERT_TRUE(std::filesystem::is_regular_file(dir / "disk" / name)) << name;
  }
  EXPECT_EQ(lrkit::read_text(dir / "disk" / "rates.csv"), "step,lr\n0,2\n1,1\n2,0\n");
  EXPECT_EQ(lrkit::h5::read_series((dir / "disk" / "rates.h5").string(), "/schedule/lr"), (std::vector<double>{2, 1, 0}));
  std::filesystem::create_symlink("loop.csv", dir / "loop.csv");
  const auto r = run("schedule 'cosine(1)' --steps 10 --out " + (dir / "loop.csv").string());
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out, "lrkit schedule: cannot write '" + (dir / "loop.csv").string() + "': it is a link in a loop of links\n");
}

TEST(ScheduleCommand, HelpAndListSucceed) {
  auto r = run("schedule --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--summary"), std::string::npos);
  r = run("schedule --list");
  EXPECT_EQ(r.code, 0);
  for (const char* family : {"wsds(", "uba(", "refined(", "join(SCHEDULE, SCHEDULE, ..., at)"})
    EXPECT_NE(r.out.find(family), std::string::npos) << family;
}

}  // namespace

TEST(ScheduleCommand, EmptyTablesAndAWsdsCutShortAreRefused) {
  const auto empty_log = (lrkit::testing::scratch_dir() / "empty_table.h5").string();
  {
    lrkit::h5::Writer writer(empty_log);
    writer.write_series("/train/step", std::vector<double>{});
    writer.write_series("/train/lr", std::vector<double>{});
  }
  const auto empty_csv = lrkit::testing::write_text("empty_table.csv", "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"schedule 'table(file=" + empty_log + ")' --steps 10", "/train/lr holds no rows"},
      {"schedule 'table(file=" + empty_csv + ")' --steps 10", "holds no"},
      {"schedule 'wsds(peak=1e-3, budgets=[800, 1000], decay=10%)' --steps 1000",
       "ends before the schedule's last checkpoint at step 1080"},
  };
  for (const auto& [args, expected] : cases) {
    const auto r = run(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << args << "\n" << r.out;
    EXPECT_EQ(lines(r.out), 1) << args << "\n" << r.out;
  }
  EXPECT_EQ(run("schedule 'wsds(peak=1e-3, budgets=[800, 1000], decay=10%)' --steps 1080 --summary").code, 0);
}
