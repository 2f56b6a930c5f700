// `lrkit log check` on logs that disagree with themselves (the killed-writer
// case and repair run in log_check_repair_test.sh).
#include <gtest/gtest.h>

#include "lrkit/h5/file.hpp"
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
  for (const char* expected : {"/train/loss has 2 rows, /train/step 3", "/train/step row 2 is 3.000000 after 1.000000",
                               "/checkpoints/crc32 has 2 rows, /checkpoints/step 1", "no /config attributes"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

// A fuzz-run log whose link table is garbled where no checksum looks: HDF5 1.10
// crashes iterating it; the check reports it in one line instead. In a sanitized
// build AddressSanitizer would catch the crash in the child and print its own
// report; the test wants the signal, as an uninstrumented build gets it.
TEST(LogCommand, ALogThatCrashesTheHdf5LibraryIsReportedNotACrash) {
  const auto r = lrkit::testing::run_command(std::string("ASAN_OPTIONS=handle_segv=0:handle_sigbus=0 ") + LRKIT_BINARY +
                                             " log check " + LRKIT_SOURCE_DIR + "/tests/cli/data/damaged_link_table.h5");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << r.out;
}

TEST(LogCommand, BadArgumentsAreOneLineErrors) {
  for (const std::string& args : std::vector<std::string>{"log", "log frobnicate x.h5", "log check", "log check /nonexistent.h5",
                                  "log check " + lrkit::testing::write_text("not_hdf5.h5", "text")}) {
    const auto r = run_lrkit(args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
  }
}

}  // namespace
