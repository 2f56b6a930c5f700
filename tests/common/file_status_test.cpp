// What a path names, asked of the kernel (lrkit/common/file_status.hpp).
#include "lrkit/common/file_status.hpp"

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "test_files.hpp"

namespace lrkit {
namespace {

namespace fs = std::filesystem;

TEST(FileStatus, NamesWhatAPathIsThroughLinks) {
  const fs::path dir = lrkit::testing::scratch_dir() / "file_status_kinds";
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir / "folder");
  std::ofstream(dir / "file") << "12345";
  ASSERT_EQ(::mkfifo((dir / "pipe").c_str(), 0600), 0);
  fs::create_symlink("folder", dir / "link_to_folder");
  fs::create_symlink("loop_b", dir / "loop_a");
  fs::create_symlink("loop_a", dir / "loop_b");
  fs::create_symlink("nowhere", dir / "dangling");

  EXPECT_EQ(path_kind((dir / "file").string()), PathKind::kFile);
  EXPECT_EQ(path_kind((dir / "folder").string()), PathKind::kDirectory);
  EXPECT_EQ(path_kind((dir / "link_to_folder").string()), PathKind::kDirectory);
  EXPECT_EQ(path_kind((dir / "pipe").string()), PathKind::kOther);
  EXPECT_EQ(path_kind((dir / "loop_a").string()), PathKind::kLinkLoop);
  EXPECT_EQ(path_kind((dir / "dangling").string()), PathKind::kMissing);
  EXPECT_EQ(path_kind((dir / "missing").string()), PathKind::kMissing);
  EXPECT_EQ(path_kind((dir / "file" / "below").string()), PathKind::kMissing) << "a file is no folder";

  EXPECT_TRUE(is_directory_path((dir / "link_to_folder").string()));
  EXPECT_FALSE(is_directory_path((dir / "file").string()));
  EXPECT_TRUE(path_exists((dir / "pipe").string()));
  EXPECT_FALSE(path_exists((dir / "loop_a").string()));
  EXPECT_FALSE(path_exists((dir / "dangling").string()));
  EXPECT_EQ(file_size_of((dir / "file").string()), std::optional<uint64_t>(5));
  EXPECT_EQ(file_size_of((dir / "missing").string()), std::nullopt);
}

TEST(FileStatus, TheWorkingDirectoryIsTheKernels) {
  char resolved[PATH_MAX];
  ASSERT_NE(::realpath(".", resolved), nullptr);
  EXPECT_EQ(working_directory(), std::optional<std::string>(resolved));
}

TEST(FileStatus, MakesEveryMissingFolderAndNamesWhatStandsInTheWay) {
  const fs::path dir = lrkit::testing::scratch_dir() / "file_status_folders";
  lrkit::testing::remove_tree(dir);
  EXPECT_EQ(make_directories((dir / "a" / "b" / "c").string() + "/"), std::nullopt);
  EXPECT_TRUE(fs::is_directory(dir / "a" / "b" / "c"));
  EXPECT_EQ(make_directories((dir / "a" / "b").string()), std::nullopt) << "folders already there are no problem";
  EXPECT_EQ(make_directories(""), std::nullopt);

  std::ofstream(dir / "a" / "file") << "x";
  EXPECT_EQ(make_directories((dir / "a" / "file" / "d").string()),
            std::optional<std::string>("'" + (dir / "a" / "file").string() + "' is not a directory"));

  if (::geteuid() != 0) {  // root makes folders anywhere
    fs::create_directories(dir / "locked");
    ::chmod((dir / "locked").c_str(), 0500);
    EXPECT_EQ(make_directories((dir / "locked" / "d").string()), std::optional<std::string>("Permission denied"));
    ::chmod((dir / "locked").c_str(), 0700);
  }
}

}  // namespace
}  // namespace lrkit
