// `lrkit log check|repair` on logs that disagree with themselves (a real
// SIGKILLed run is log_check_repair_test.sh).
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>

#include "killed_writer.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/h5/series_log.hpp"
#include "run_command.hpp"
#include "test_files.hpp"

namespace {

using lrkit::testing::run_lrkit;

TEST(LogCommand, ACheckNamesEveryDisagreement) {
  const auto path = (lrkit::testing::scratch_dir() / "inconsistent_log.h5").string();
  {
    lrkit::h5::Writer w(path);
    w.write_series("/train/step", std::vector<double>{0, 1, 3});
    w.write_series("/train/loss", std::vector<double>{2.0, 1.9});
    w.write_series("/checkpoints/step", std::vector<double>{2});
    w.write_series("/checkpoints/crc32", std::vector<double>{1, 2});
  }
  const auto r = run_lrkit("log check " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* expected : {"/train/loss has 2 rows, /train/step 3", "/train/step row 2 is 3 after 1",
                               "/checkpoints/crc32 has 2 rows, /checkpoints/step 1", "no /config attributes"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

TEST(LogCommand, ACheckNamesASessionWithoutItsStartStep) {
  const auto path = (lrkit::testing::scratch_dir() / "sessions_log.h5").string();
  {
    lrkit::h5::SeriesLog log(path, {{"/train/step"}},
                             {{"/", "source", "lrkit.torch.DispersionHook"}, {"/sessions/0", "step", "0"},
                              {"/sessions/1", "step", "1.5"}, {"/sessions/2", "kind", "resume"}, {"/sessions/3", "step", "4"}});
    for (const double step : {0.0, 1.0, 2.0, 3.0, 4.0}) log.append("/train/step", step);
  }
  const auto r = run_lrkit("log check " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, path + ": /sessions/1 has no whole step >= 0 (its attribute 'step' is '1.5')\n" + path +
                       ": /sessions/2 has no whole step >= 0 (its attribute 'step' is missing)\n");
}

// A writer killed inside a flush, after it wrote /train/step's new row and
// before /train/loss's: the log is marked and one row is torn. Repair clears
// the mark and keeps the rows every series has.
TEST(LogCommand, RepairCutsTheRowsOfAFlushCutShort) {
  const auto dir = lrkit::testing::scratch_dir() / "torn_flush";
  lrkit::testing::remove_tree(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "log.h5").string();
  lrkit::testing::write_as_killed(path, {{"/train/step"}, {"/train/loss"}, {"/checkpoints/step"}, {"/checkpoints/crc32"}},
                                  [](lrkit::h5::SeriesLog& log) {
                                    for (const double step : {0.0, 1.0, 2.0}) log.append("/train/step", step);
                                    for (const double loss : {2.0, 1.9}) log.append("/train/loss", loss);
                                    log.append("/checkpoints/step", 2.0);
                                  });

  auto r = run_lrkit("log check " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  for (const char* expected : {"marked open for writing", "/train/loss has 2 rows, /train/step 3",
                               "/checkpoints/crc32 has 0 rows, /checkpoints/step 1"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;

  r = run_lrkit("log repair " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* expected : {"cleared the mark", "series of /train/step keep their first 2 rows",
                               "series of /checkpoints/step keep their first 0 rows", "gone from /train/step\n",
                               "gone from /checkpoints/step\n"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
  EXPECT_EQ(lrkit::h5::read_series(path, "/train/step"), (std::vector<double>{0, 1}));
  EXPECT_EQ(lrkit::h5::read_series(path, "/train/loss"), (std::vector<double>{2.0, 1.9}));
  EXPECT_TRUE(lrkit::h5::read_series(path, "/checkpoints/step").empty());
  EXPECT_FALSE(lrkit::h5::has_writer_mark(path));

  r = run_lrkit("log check " + path);  // what is left: the log has no /config
  EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << r.out;
  EXPECT_NE(r.out.find("no /config attributes"), std::string::npos) << r.out;
  r = run_lrkit("log repair " + path);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("nothing to repair"), std::string::npos) << r.out;
}

// A write a full disk refused leaves the log short of the end HDF5 had allocated: check says so, repair extends it
// (here run in the run directory on the bare file name, whose directory is ".").
TEST(LogCommand, ALogShortOfItsAllocatedEndIsNamedAndExtendedByRepair) {
  const auto dir = lrkit::testing::scratch_dir() / "short_log";
  lrkit::testing::remove_tree(dir);
  std::filesystem::create_directories(dir);
  const auto path = (dir / "log.h5").string();
  lrkit::testing::write_as_killed(path, {{"/train/step"}, {"/train/loss"}}, [](lrkit::h5::SeriesLog& log) {
    for (int step = 0; step < 600; ++step) {
      log.append("/train/step", step);
      log.append("/train/loss", 1.0);
    }
  });
  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
  auto r = run_lrkit("log check " + path);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, path + ": ends 100 bytes before the end HDF5 had allocated (a write was refused: a full disk or a file "
                          "size limit), so HDF5 refuses it as truncated; lrkit log repair extends it and cuts the rows of "
                          "the flush the refusal cut short\n");
  r = lrkit::testing::run_command("cd " + dir.string() + " && " + LRKIT_BINARY + " log repair log.h5");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.rfind("log.h5: extended by the 100 bytes a refused write left out, so HDF5 opens it\n", 0), 0u) << r.out;
  EXPECT_EQ(lrkit::h5::bytes_short_of_allocated_end(path), 0u);
  EXPECT_NO_THROW(lrkit::h5::list_datasets(path));
}

// A fuzz-run log whose link table is garbled where no checksum looks: HDF5 1.10
// crashes iterating it; check and repair report it in one line instead. In a sanitized
// build AddressSanitizer would catch the crash in the child and print its own
// report; the test wants the signal, as an uninstrumented build gets it. What the garbage
// makes HDF5 do depends on what lies beside it in memory: with the same HDF5 1.10.8 under
// Ubuntu 24.04's glibc it returned an error instead, which is one line too.
TEST(LogCommand, ALogThatCrashesTheHdf5LibraryIsReportedNotACrash) {
  const auto log = lrkit::testing::scratch_dir() / "damaged_link_table.h5";  // repair may write: a copy
  std::filesystem::copy_file(std::string(LRKIT_SOURCE_DIR) + "/tests/cli/data/damaged_link_table.h5", log,
                             std::filesystem::copy_options::overwrite_existing);
  for (const char* action : {"check", "repair"}) {
    const auto r = lrkit::testing::run_command(std::string("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0 ") + LRKIT_BINARY +
                                               " log " + action + " " + log.string());
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << action << "\n" << r.out;
    if (r.out.find("crashed the HDF5 library") != std::string::npos) {
      EXPECT_EQ(r.code, 1) << action << "\n" << r.out;
    } else {  // check counts a log it cannot read as one more problem (exit 1); repair cannot act on it (exit 2)
      EXPECT_EQ(r.code, std::string(action) == "check" ? 1 : 2) << action << "\n" << r.out;
      EXPECT_NE(r.out.find("cannot list the datasets of '" + log.string() + "' (damaged file?)"), std::string::npos)
          << action << ": neither the crash's report nor HDF5's error\n" << r.out;
      std::cout << "HDF5 returned an error on this machine, no crash: the crash's report went untested\n";
    }
  }
}

TEST(LogCommand, BadArgumentsAreOneLineErrors) {
  const auto not_a_run = (lrkit::testing::scratch_dir() / "not_a_run").string();
  std::filesystem::create_directories(not_a_run);
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {"log", "usage: lrkit log check LOG"},
           {"log frobnicate x.h5", "unknown action 'frobnicate'"},
           {"log check", "give one run log"},
           {"log check /nonexistent.h5", "'/nonexistent.h5' does not exist or cannot be reached"},
           {"log repair " + not_a_run, "'" + not_a_run + "' is a directory, not a file (no log.h5 in it: not a run directory)"},
           {"log check " + lrkit::testing::write_text("not_hdf5.h5", "text"), "is not an HDF5 file"}}) {
    const auto r = run_lrkit(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    EXPECT_NE(r.out.find(expected), std::string::npos) << args << "\n" << r.out;
  }
}

}  // namespace
