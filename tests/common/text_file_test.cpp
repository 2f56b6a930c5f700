// Whole-file reads and atomic writes (lrkit/common/text_file.hpp).
#include "lrkit/common/text_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "test_files.hpp"

namespace lrkit {
namespace {

namespace fs = std::filesystem;

TEST(TextFile, WritesCreateTheDirectoryAndReplaceTheFileWhole) {
  const fs::path path = lrkit::testing::scratch_dir() / "text_file" / "nested" / "marker.txt";
  write_text_atomically(path, std::string("first\0line\n", 11));
  EXPECT_EQ(read_text(path), std::string("first\0line\n", 11)) << "bytes as given, NUL included";
  write_text_atomically(path, "");
  EXPECT_EQ(read_text(path), "");
  EXPECT_FALSE(fs::exists(path.string() + ".tmp")) << "the temporary is renamed, not left behind";
}

TEST(TextFile, FailuresNameTheFile) {
  const fs::path missing = lrkit::testing::scratch_dir() / "text_file" / "missing.txt";
  try {
    read_text(missing);
    FAIL() << "reading a missing file must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read '" + missing.string() + "'"), std::string::npos) << e.what();
  }
  // A directory where the file should go: the write fails and leaves no temporary.
  const fs::path taken = lrkit::testing::scratch_dir() / "text_file" / "taken";
  fs::create_directories(taken / "inside");
  try {
    write_text_atomically(taken, "text");
    FAIL() << "writing over a directory must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot write '" + taken.string() + "'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(fs::is_directory(taken / "inside")) << "the directory is untouched";
  EXPECT_FALSE(fs::exists(taken.string() + ".tmp"));
  // A pipe where the file should go was replaced by a regular file (and /dev/null, for a run as root).
  const fs::path pipe = lrkit::testing::scratch_dir() / "text_file" / "pipe";
  fs::remove(pipe);
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  try {
    write_text_atomically(pipe, "text");
    FAIL() << "writing over a pipe must throw";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()).rfind("cannot write '" + pipe.string() + "': it is not a regular file", 0), 0u)
        << e.what();
  }
  EXPECT_TRUE(fs::is_fifo(pipe)) << "the pipe is untouched";
  EXPECT_FALSE(fs::exists(pipe.string() + ".tmp"));
}

}  // namespace
}  // namespace lrkit
