// What keeps an output file from being created, said about the part of the path
// that is wrong (lrkit/common/output_file.hpp).
#include "lrkit/common/output_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "test_files.hpp"

namespace lrkit {
namespace {

namespace fs = std::filesystem;

TEST(OutputFile, NamesTheDirectoryThatIsMissingOrIsAFile) {
  const fs::path dir = lrkit::testing::scratch_dir() / "output_file";
  fs::create_directories(dir);
  const auto file = lrkit::testing::write_text("output_file/plain.txt", "x");
  EXPECT_EQ(output_file_problem((dir / "new.csv").string()), std::nullopt);
  EXPECT_EQ(output_file_problem(file), std::nullopt) << "an existing file is replaced";
  EXPECT_EQ(output_file_problem("relative.csv"), std::nullopt) << "the working directory";
  EXPECT_EQ(output_file_problem(dir.string()), "it is a directory");
  EXPECT_EQ(output_file_problem((dir / "absent" / "x.csv").string()), "directory '" + (dir / "absent").string() + "' does not exist");
  EXPECT_EQ(output_file_problem(file + "/x.csv"), "'" + file + "' is not a directory");
}

// An output is written beside its path and renamed over it: a device or pipe there would be replaced by a file
// (/dev/null, for a run as root).
TEST(OutputFile, ADeviceOrPipeOrALinkToOneIsNotReplaced) {
  const fs::path dir = lrkit::testing::scratch_dir() / "output_file_special";
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir);
  const std::string pipe = (dir / "pipe.csv").string();
  ASSERT_EQ(::mkfifo(pipe.c_str(), 0600), 0);
  fs::create_symlink("/dev/null", dir / "null.h5");
  const std::string refused = "it is not a regular file (a device or pipe), and writing the file whole and renaming it "
                              "into place would replace it: name a file";
  for (const std::string& path : {pipe, (dir / "null.h5").string(), std::string("/dev/null")}) {
    EXPECT_EQ(output_file_problem(path), refused) << path;
    EXPECT_EQ(replaced_non_file_problem(path), refused) << path;
  }
  const auto file = lrkit::testing::write_text("output_file_special/plain.csv", "x");
  fs::create_symlink(file, dir / "link.csv");
  EXPECT_EQ(replaced_non_file_problem((dir / "link.csv").string()), std::nullopt) << "a link to a file";
  EXPECT_EQ(replaced_non_file_problem((dir / "new.csv").string()), std::nullopt);
  EXPECT_EQ(replaced_non_file_problem(dir.string()), std::nullopt) << "a directory: output_file_problem's own words";
}

// A write lands on the file a link names, through a chain of links, relative ones resolved from the link's folder.
TEST(OutputFile, AWriteThroughLinksLandsOnTheFileTheyName) {
  const fs::path dir = lrkit::testing::scratch_dir() / "output_file_links";
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir / "disk");
  const auto file = lrkit::testing::write_text("output_file_links/disk/log.csv", "x");
  fs::create_symlink("disk/log.csv", dir / "relative.csv");
  fs::create_symlink(dir / "relative.csv", dir / "chain.csv");
  fs::create_symlink("disk/new.csv", dir / "dangling.csv");
  EXPECT_EQ(through_links(dir / "relative.csv"), dir / "disk/log.csv");
  EXPECT_EQ(through_links(dir / "chain.csv"), dir / "disk/log.csv");
  EXPECT_EQ(through_links(dir / "dangling.csv"), dir / "disk/new.csv") << "the file a dangling link names is created";
  EXPECT_EQ(through_links(file), fs::path(file));
  EXPECT_EQ(through_links(dir / "absent.csv"), dir / "absent.csv");
  fs::create_symlink("loop_b.csv", dir / "loop_a.csv");
  fs::create_symlink("loop_a.csv", dir / "loop_b.csv");
  EXPECT_EQ(replaced_non_file_problem((dir / "loop_a.csv").string()), "it is a link in a loop of links");
  EXPECT_EQ(output_file_problem((dir / "loop_a.csv").string()), "it is a link in a loop of links");
  EXPECT_EQ(replaced_non_file_problem((dir / "dangling.csv").string()), std::nullopt);
}

// A temporary's name is cut to fit the file system's longest name, at a character's start: half a character would
// show as garbage in a listing of a kill's leftovers.
TEST(OutputFile, ANameIsCutAtACharactersStart) {
  EXPECT_EQ(name_cut_to("log.csv", 7), "log.csv");
  EXPECT_EQ(name_cut_to("log.csv", 3), "log");
  EXPECT_EQ(name_cut_to("caf\xc3\xa9.csv", 4), "caf") << "the cut falls inside the two bytes of an accented e";
  EXPECT_EQ(name_cut_to("caf\xc3\xa9.csv", 5), "caf\xc3\xa9");
  EXPECT_EQ(name_cut_to("\xe2\x82\xac", 2), "") << "a three-byte euro sign";
  EXPECT_EQ(longest_name_in(lrkit::testing::scratch_dir()), 255u) << "Linux's file systems";
}

}  // namespace
}  // namespace lrkit
