#include "lrkit/h5/file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "file_size_limit.hpp"
#include "lrkit/h5/series_log.hpp"
#include "test_files.hpp"

namespace lrkit::h5 {
namespace {

std::string scratch(const std::string& name) { return (lrkit::testing::scratch_dir() / name).string(); }

TEST(H5File, WritesAndReadsSeriesAndAttributes) {
  const auto path = scratch("a.h5");
  {
    Writer w(path);
    w.write_series("/x/y", std::vector<double>{1.5, -2, 3});
    w.write_series("/x/i", std::vector<int64_t>{7, 8});
    w.write_series("/empty", std::vector<double>{});
    w.set_attribute("/x", "spec", std::string("cosine(1)"));
    w.set_attribute("/", "n", int64_t{3});
  }
  EXPECT_TRUE(is_hdf5_file(path));
  EXPECT_EQ(read_series(path, "/x/y"), (std::vector<double>{1.5, -2, 3}));
  EXPECT_EQ(read_series(path, "/x/i"), (std::vector<double>{7, 8}));
  EXPECT_TRUE(read_series(path, "/empty").empty());
}

TEST(H5File, NumberedGroupsAreReadInOrderUpToTheFirstMissing) {
  const auto path = scratch("numbered.h5");
  {
    SeriesLog log(path, {{"/train/step"}},
                  {{"/sessions/0", "step", "0"}, {"/sessions/1", "step", "6"}, {"/sessions/1", "kind", "resume"},
                   {"/sessions/3", "step", "9"}});
  }
  const auto sessions = read_numbered_attributes(path, "/sessions");
  ASSERT_EQ(sessions.size(), 2u) << "/sessions/3 lies past the missing /sessions/2";
  EXPECT_EQ(sessions[0], (std::map<std::string, std::string>{{"step", "0"}}));
  EXPECT_EQ(sessions[1], (std::map<std::string, std::string>{{"kind", "resume"}, {"step", "6"}}));
  EXPECT_TRUE(read_numbered_attributes(path, "/nothing").empty());
}

TEST(H5File, ClearErrorsForMissingFileDatasetAndNonHdf5) {
  const auto text = lrkit::testing::write_text("plain.txt", "not hdf5");
  EXPECT_FALSE(is_hdf5_file(text));
  EXPECT_FALSE(is_hdf5_file(scratch("missing.h5")));
  try {
    read_series(text, "/a");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("is not an HDF5 file"), std::string::npos);
  }
  EXPECT_THROW(read_series(scratch("missing.h5"), "/a"), Error);
  const auto path = scratch("b.h5");
  { Writer(path).write_series("/a", std::vector<double>{1}); }
  try {
    read_series(path, "/b");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no dataset '/b'"), std::string::npos);
  }
  EXPECT_THROW(Writer("/nonexistent-dir/x.h5"), Error);
}

TEST(H5File, TruncateRowsKeepsTheFirstRowsOfEachNamedSeries) {
  const auto path = scratch("d.h5");
  {
    SeriesLog log(path, {{"/a"}, {"/m", 2, true}, {"/untouched"}});
    for (const double v : {1.0, 2.0, 3.0}) {
      log.append("/a", v);
      log.append("/m", {v, -v});
      log.append("/untouched", v);
    }
  }
  truncate_rows(path, {{"/a", 1}, {"/m", 2}});
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{1}));
  const auto m = read_matrix(path, "/m");
  EXPECT_EQ(m.rows, 2);
  EXPECT_EQ(m.values, (std::vector<double>{1, -1, 2, -2}));
  EXPECT_EQ(read_series(path, "/untouched").size(), 3u);
  for (const auto& bad : std::vector<std::map<std::string, int64_t>>{{{"/a", 2}}, {{"/a", -1}}, {{"/missing", 0}}}) {
    try {
      truncate_rows(path, bad);
      FAIL() << bad.begin()->first;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("'" + path + "' (" + bad.begin()->first + ")"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{1}));  // a refused cut changes nothing
}

TEST(H5File, TruncatedFileIsAnErrorNotACrash) {
  const auto path = scratch("c.h5");
  {
    Writer w(path);
    w.write_series("/a", std::vector<double>(10000, 1.0));
  }
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  EXPECT_THROW(read_series(path, "/a"), Error);
}

// A write a full disk refuses leaves a run log short of the end its superblock records as allocated: HDF5 refuses
// it as truncated until it is extended back to that end.
TEST(H5File, ALogShortOfItsAllocatedEndIsExtendedSoHdf5OpensIt) {
  const auto path = scratch("short.h5");
  {
    SeriesLog log(path, {{"/train/step", 1}});
    for (int step = 0; step < 1000; ++step) log.append("/train/step", step);
  }
  EXPECT_EQ(bytes_short_of_allocated_end(path), 0u);
  const auto size = std::filesystem::file_size(path);
  std::filesystem::resize_file(path, size - 100);
  EXPECT_EQ(bytes_short_of_allocated_end(path), 100u);
  EXPECT_THROW(read_series(path, "/train/step"), Error);
  extend_to_allocated_end(path);
  EXPECT_EQ(std::filesystem::file_size(path), size);
  EXPECT_EQ(bytes_short_of_allocated_end(path), 0u);
  EXPECT_EQ(read_series(path, "/train/step").size(), 1000u);
  // Files it does not know stay as they are: no HDF5 signature, an older superblock (Writer's), none at all.
  const auto text = scratch("short.txt");
  std::ofstream(text) << "not HDF5, and long enough to hold a superblock's first 36 bytes";
  EXPECT_EQ(bytes_short_of_allocated_end(text), 0u);
  const auto table = scratch("short_table.h5");
  {
    Writer w(table);
    w.write_series("/a", std::vector<double>(1000, 1.0));
  }
  std::filesystem::resize_file(table, std::filesystem::file_size(table) - 100);
  EXPECT_EQ(bytes_short_of_allocated_end(table), 0u);
  EXPECT_EQ(bytes_short_of_allocated_end(scratch("no_such.h5")), 0u);
}

// A file written whole or not at all: what it replaces stays when writing fails, and no temporary file is left.
TEST(H5File, AFileWrittenAtomicallyIsWholeOrTheOldOneStays) {
  const auto path = scratch("atomic.h5");
  write_file_atomically(path, [](Writer& w) { w.write_series("/a", std::vector<double>{1, 2}); });
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{1, 2}));
  EXPECT_THROW(write_file_atomically(path, [](Writer& w) {
                 w.write_series("/a", std::vector<double>{3});
                 throw std::runtime_error("the caller failed");
               }),
               std::runtime_error);
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{1, 2}));
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{});
  // A disk that refuses the write (a file size limit, in a child): the reason, the old file, no temporary.
  const auto run = lrkit::testing::under_file_size_limit(32 * 1024, [&] {
    try {
      write_file_atomically(path, [](Writer& w) { w.write_series("/a", std::vector<double>(100000, 7.0)); });
    } catch (const WriteError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  });
  ASSERT_TRUE(run.exited);
  const std::string& message = run.returned;
  // The file asked for is named, not the removed temporary one.
  EXPECT_NE(message.find("'" + path + "'"), std::string::npos) << message;
  EXPECT_EQ(message.find(".tmp"), std::string::npos) << message;
  EXPECT_NE(message.find(": File too large"), std::string::npos) << message;
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{1, 2}));
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{});
  const auto nowhere = scratch("no_such_folder/table.h5");
  try {
    write_file_atomically(nowhere, [](Writer& w) { w.write_series("/a", std::vector<double>{1}); });
    FAIL() << "wrote into a folder that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + nowhere + "': No such file or directory");
    EXPECT_EQ(dynamic_cast<const WriteError*>(&e), nullptr) << "a folder that does not exist is bad input, no failed write";
  }
  // A pipe at the path was replaced by the file (and /dev/null, for a run as root): refused, left as it was.
  const auto pipe = scratch("pipe.h5");
  std::filesystem::remove(pipe);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  try {
    write_file_atomically(pipe, [](Writer& w) { w.write_series("/a", std::vector<double>{1}); });
    FAIL() << "wrote over a pipe";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write '" + pipe + "': it is not a regular file", 0), 0u) << e.what();
  }
  EXPECT_TRUE(std::filesystem::is_fifo(pipe));
  EXPECT_EQ(lrkit::testing::temporaries_beside(pipe), std::vector<std::string>{});
  // A link at the path: the file it names is replaced, and the link stays.
  const auto link = scratch("atomic_link.h5");
  std::filesystem::remove(link);
  std::filesystem::create_symlink("atomic.h5", link);
  write_file_atomically(link, [](Writer& w) { w.write_series("/a", std::vector<double>{4}); });
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_EQ(read_series(path, "/a"), (std::vector<double>{4}));
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{});
  EXPECT_EQ(lrkit::testing::temporaries_beside(link), std::vector<std::string>{});
  // A name as long as the file system takes: the temporary's name is cut to fit ("File name too long" before).
  const auto longest = scratch(std::string(252, 'n') + ".h5");
  write_file_atomically(longest, [](Writer& w) { w.write_series("/a", std::vector<double>{5}); });
  EXPECT_EQ(read_series(longest, "/a"), (std::vector<double>{5}));
  EXPECT_EQ(lrkit::testing::temporaries_beside(longest), std::vector<std::string>{});
}

TEST(H5Handle, MovesOwnershipAndClosesOnce) {
  Handle a = file_handle(H5Fcreate(scratch("d.h5").c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), "create");
  const hid_t id = a.get();
  Handle b = std::move(a);
  EXPECT_FALSE(a);
  EXPECT_EQ(b.get(), id);
  b.reset();
  EXPECT_FALSE(b);
  EXPECT_THROW(file_handle(-1, "negative id"), Error);
}

}  // namespace
}  // namespace lrkit::h5
