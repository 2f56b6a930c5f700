// Whole-file reads and atomic writes (lrkit/common/text_file.hpp).
#include "lrkit/common/text_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

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
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{}) << "the temporary is renamed, not left behind";
}

// A link at the path stays a link, and the file it names gets the text: the rename goes beside that file (on its
// disk), not over the link.
TEST(TextFile, AWriteThroughALinkReplacesTheFileItNamesAndKeepsTheLink) {
  const fs::path dir = lrkit::testing::scratch_dir() / "text_file_link";
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir / "disk");
  write_text_atomically(dir / "disk" / "schedule.csv", "old");
  fs::create_symlink("disk/schedule.csv", dir / "schedule.csv");
  write_text_atomically(dir / "schedule.csv", "new");
  EXPECT_TRUE(fs::is_symlink(dir / "schedule.csv"));
  EXPECT_EQ(fs::read_symlink(dir / "schedule.csv"), "disk/schedule.csv");
  EXPECT_EQ(read_text(dir / "disk" / "schedule.csv"), "new");
  fs::create_symlink("disk/fresh.csv", dir / "fresh.csv");
  write_text_atomically(dir / "fresh.csv", "made");
  EXPECT_TRUE(fs::is_symlink(dir / "fresh.csv"));
  EXPECT_EQ(read_text(dir / "disk" / "fresh.csv"), "made") << "a dangling link: the file it names is created";
  std::vector<std::string> left;
  for (const auto& entry : fs::directory_iterator(dir / "disk")) left.push_back(entry.path().filename().string());
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"fresh.csv", "schedule.csv"})) << "no temporary left";
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  try {
    write_text_atomically(dir / "loop_a", "text");
    FAIL() << "wrote through a loop of links";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "cannot write '" + (dir / "loop_a").string() + "': it is a link in a loop of links");
  }
  EXPECT_TRUE(fs::is_symlink(dir / "loop_a"));
}

// Two writers of one output (the ranks of a job that each save it): both wrote into PATH.tmp, so a reader found half
// of one version with half of the other, and a writer's rename failed ("No such file or directory").
TEST(TextFile, TwoWritersOfOneFileNeverMixTheirVersions) {
  const fs::path path = lrkit::testing::scratch_dir() / "text_file_shared" / "norms.csv";
  const std::string longer(300000, 'a'), shorter(100000, 'b');
  write_text_atomically(path, longer);
  std::vector<pid_t> writers;
  for (const std::string* text : {&longer, &shorter}) {
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      int failures = 0;
      for (int i = 0; i < 300; ++i) {
        try {
          write_text_atomically(path, *text);
        } catch (const std::runtime_error&) {
          ++failures;
        }
      }
      ::_exit(failures == 0 ? 0 : 1);
    }
    writers.push_back(child);
  }
  int reads = 0, mixed = 0, running = 2;
  std::vector<int> statuses;
  while (running > 0) {
    const std::string seen = read_text(path);
    ++reads;
    mixed += seen != longer && seen != shorter;
    for (pid_t& writer : writers) {
      int status = 0;
      if (writer > 0 && ::waitpid(writer, &status, WNOHANG) == writer) {
        statuses.push_back(status);
        writer = -1;
        --running;
      }
    }
  }
  EXPECT_EQ(mixed, 0) << "of " << reads << " reads";
  for (const int status : statuses) EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a writer failed";
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{});
}

// A name as long as the file system takes (255 bytes): its temporary's name, longer by its mark, went past that, and
// the write failed with "File name too long" from 236 bytes on.
TEST(TextFile, ANameAsLongAsTheFileSystemTakesIsWritten) {
  const fs::path dir = lrkit::testing::scratch_dir() / "text_file_long";
  fs::create_directories(dir);
  std::string accented;
  for (int i = 0; i < 127; ++i) accented += "\xc3\xa9";  // "é": a cut inside one would leave half a character
  for (const std::string& name : {std::string(255, 'n'), accented + "s", std::string(236, 'n')}) {
    const fs::path path = dir / name;
    write_text_atomically(path, "first");
    write_text_atomically(path, "second");
    EXPECT_EQ(read_text(path), "second") << name.size() << " bytes";
    EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{}) << name.size() << " bytes";
  }
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
  EXPECT_EQ(lrkit::testing::temporaries_beside(taken), std::vector<std::string>{});
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
  EXPECT_EQ(lrkit::testing::temporaries_beside(pipe), std::vector<std::string>{});
}

}  // namespace
}  // namespace lrkit
