#include "lrkit/h5/series_log.hpp"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <csignal>
#include <sstream>
#include <string>

#include "file_size_limit.hpp"
#include "lrkit/h5/file.hpp"
#include "test_files.hpp"

namespace lrkit::h5 {
namespace {

std::string scratch(const std::string& name) { return (lrkit::testing::scratch_dir() / name).string(); }

TEST(SeriesLog, BuffersUntilFlushAndReadsBackLive) {
  const auto path = scratch("log.h5");
  SeriesLog log(path, {{"/train/loss", 1}, {"/ranks/loss", 3}}, {{"/", "config", "[train]\nsteps=3\n"}});
  log.append("/train/loss", 2.5);
  log.append("/ranks/loss", {1, 2, 3});
  EXPECT_TRUE(read_series(path, "/train/loss").empty());  // buffered, not yet written
  log.flush();
  EXPECT_EQ(read_series(path, "/train/loss"), (std::vector<double>{2.5}));  // read while the writer is open
  for (int i = 0; i < 600; ++i) log.append("/train/loss", i);
  log.flush();
  EXPECT_EQ(read_series(path, "/train/loss").size(), 601u);
  const Matrix ranks = read_matrix(path, "/ranks/loss");
  EXPECT_EQ(ranks.rows, 1);
  EXPECT_EQ(ranks.columns, 3);
  EXPECT_EQ(ranks.at(0, 2), 3.0);
  EXPECT_THROW(read_series(path, "/ranks/loss"), Error);  // not 1-D
  EXPECT_THROW(log.append("/nope", 1.0), Error);
  EXPECT_THROW(log.append("/ranks/loss", {1, 2}), Error);
}

// HDF5 writes a chunk whole: with 256 rows a chunk, one row of a 3 * 2^20-wide matrix (the pairwise cosines of 1,774
// workers) needed a 6 GiB chunk, which HDF5 refuses, and a 2^17-wide one wrote 256 MiB for its first row.
TEST(SeriesLog, AWideSeriesWritesAboutWhatItHolds) {
  const auto path = scratch("wide_log.h5");
  const int64_t wide = int64_t{3} << 20;
  {
    SeriesLog log(path, {{"/train/step", 1}, {"/wide", wide, true}, {"/ranks/loss", 1 << 17, true}});
    for (int step = 0; step < 2; ++step) {
      log.append("/train/step", step);
      log.append("/wide", std::vector<double>(static_cast<size_t>(wide), 0.5 + step));
      log.append("/ranks/loss", std::vector<double>(size_t{1} << 17, 1.0));
    }
  }
  const Matrix back = read_matrix(path, "/wide");
  EXPECT_EQ(back.rows, 2);
  EXPECT_EQ(back.at(1, wide - 1), 1.5);
  const auto held = static_cast<uintmax_t>(2 * (wide + (1 << 17)) * 8);
  EXPECT_LT(std::filesystem::file_size(path), held + (uintmax_t{4} << 20)) << "about the 50 MiB of its rows";
}

TEST(SeriesLog, AKilledWriterLeavesEveryFlushedRow) {
  const auto path = scratch("killed.h5");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    SeriesLog log(path, {{"/train/step", 1}});
    for (int step = 0; step < 1000; ++step) {
      log.append("/train/step", step);
      if ((step + 1) % 100 == 0) log.flush();
      if (step == 749) raise(SIGKILL);  // 50 rows buffered, never flushed
    }
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  const auto steps = read_series(path, "/train/step");
  ASSERT_EQ(steps.size(), 700u);
  for (size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i], static_cast<double>(i));
  // The killed writer left the file marked open for writing; a resumed run continues it anyway.
  {
    SeriesLog log(path, {{"/train/step", 1}}, SeriesLog::Continue{{{"/train/step", 600}}, {}});
    log.append("/train/step", 600);
  }
  const auto resumed = read_series(path, "/train/step");
  ASSERT_EQ(resumed.size(), 601u);
  EXPECT_EQ(resumed.back(), 600.0);
}

// A full disk, as a file size limit makes it (the write fails with EFBIG once the file would pass it): HDF5's cache
// takes the rows and only the flush meets the refusal. The flush says so, nothing more is written, closing is quiet,
// and the file, extended to its allocated end, holds every row flushed before.
TEST(SeriesLog, AWriteTheDiskRefusesFailsTheFlushAndKeepsTheRowsFlushedBefore) {
  const auto path = scratch("refused.h5");
  const auto run = lrkit::testing::under_file_size_limit(64 * 1024, [&] {
    int flushed = 0;
    std::string message, after;
    {
      SeriesLog log(path, {{"/train/step", 1}, {"/ranks/loss", 8}});
      try {
        for (int step = 0; step < 100000; ++step) {
          log.append("/train/step", step);
          log.append("/ranks/loss", std::vector<double>(8, step));
          if ((step + 1) % 50 == 0) {
            log.flush();
            flushed = step + 1;
          }
        }
      } catch (const Error& e) {
        message = e.what();
      }
      try {
        log.flush();
      } catch (const Error& e) {
        after = e.what();
      }
    }  // the destructor closes what it can, quietly
    return std::to_string(flushed) + "\n" + message + "\n" + after + "\n";
  });
  ASSERT_TRUE(run.exited);
  std::istringstream in(run.returned);
  int flushed = 0;
  std::string message, after;
  in >> flushed;
  in.ignore();
  std::getline(in, message);
  std::getline(in, after);
  ASSERT_GT(flushed, 0);
  EXPECT_NE(message.find("in run log '" + path + "': File too large"), std::string::npos) << message;
  EXPECT_EQ(after, "run log '" + path + "' failed to write earlier; nothing more is written to it");
  extend_to_allocated_end(path);
  const auto steps = read_series(path, "/train/step");
  ASSERT_GE(steps.size(), static_cast<size_t>(flushed));
  for (int i = 0; i < flushed; ++i) ASSERT_EQ(steps[static_cast<size_t>(i)], i);
}

// Refused while the log is being created (its first write is when SWMR writing starts): a WriteError with the reason,
// and not one line of HDF5's diagnostics as the half-made handles close.
TEST(SeriesLog, ALogTheDiskRefusesToCreateIsAWriteErrorAndClosesQuietly) {
  const auto path = scratch("refused_at_start.h5");
  const auto run = lrkit::testing::under_file_size_limit(1024, [&] {
    try {
      SeriesLog log(path, {{"/train/step", 1}, {"/ranks/loss", 8}}, {{"/", "config", std::string(4096, 'x')}});
    } catch (const WriteError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  ASSERT_TRUE(run.exited);
  EXPECT_NE(run.returned.find("run log '" + path + "': File too large"), std::string::npos) << run.returned;
  EXPECT_EQ(run.printed, "");
}

TEST(SeriesLog, ContinuesAnExistingLogAfterTruncatingIt) {
  const auto path = scratch("continue.h5");
  {
    SeriesLog log(path, {{"/a", 1}, {"/b", 2}});
    for (int i = 0; i < 10; ++i) {
      log.append("/a", i);
      log.append("/b", {1.0 * i, 2.0 * i});
    }
  }
  {
    SeriesLog log(path, {{"/a", 1}, {"/b", 2}}, SeriesLog::Continue{{{"/a", 4}}, {}});
    log.append("/a", 99);
  }
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{0, 1, 2, 3, 99}));
  EXPECT_THROW(SeriesLog(path, {{"/missing", 1}}, SeriesLog::Continue{}), Error);
  EXPECT_THROW(SeriesLog(scratch("none.h5"), {{"/a", 1}}, SeriesLog::Continue{}), Error);
}

TEST(SeriesLog, AColumnAddedSinceTheLogWasWrittenStartsWithNaNRows) {
  const auto path = scratch("continue_new_column.h5");
  {
    SeriesLog log(path, {{"/a", 1}});
    for (int i = 0; i < 5; ++i) log.append("/a", i);
  }
  {
    SeriesLog log(path, {{"/a", 1}, {"/new", 1}}, SeriesLog::Continue{{{"/a", 3}, {"/new", 3}}, {}});
    log.append("/a", 7);
    log.append("/new", 0.5);
  }
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{0, 1, 2, 7}));
  const auto added = read_series(path, "/new");
  ASSERT_EQ(added.size(), 4u);
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(added[i])) << i;
  EXPECT_EQ(added[3], 0.5);
}

TEST(SeriesLog, UnwritablePathIsAClearErrorWithTheReason) {
  const auto error_of = [](const std::string& path) -> std::string {
    try {
      SeriesLog log(path, {{"/a", 1}});
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_EQ(error_of("/nonexistent-dir/log.h5"),
            "cannot create run log '/nonexistent-dir/log.h5': directory '/nonexistent-dir' does not exist");
  const std::string directory = lrkit::testing::scratch_dir().string();
  EXPECT_EQ(error_of(directory), "cannot create run log '" + directory + "': it is a directory");
  const std::string file = scratch("a_file");
  SeriesLog(file, {{"/a", 1}});
  EXPECT_EQ(error_of(file + "/log.h5"), "cannot create run log '" + file + "/log.h5': '" + file + "' is not a directory");
  EXPECT_EQ(error_of("/proc/lrkit_log.h5"), "cannot create run log '/proc/lrkit_log.h5': No such file or directory");
}

}  // namespace
}  // namespace lrkit::h5
