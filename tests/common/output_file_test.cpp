// What keeps an output file from being created, said about the part of the path
// that is wrong (lrkit/common/output_file.hpp).
#include "lrkit/common/output_file.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace lrkit
