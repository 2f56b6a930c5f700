// INI text as the train config and the sweep file read it (lrkit/common/input_file.hpp).
#include "lrkit/common/input_file.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "test_files.hpp"

namespace lrkit {
namespace {

std::string refusal(const std::string& path) {
  try {
    read_ini_text(path, "config file");
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(InputFile, IniTextIsReadWithoutItsByteOrderMark) {
  const auto plain = testing::write_text("plain.cfg", "[train]\nsteps = 3\n");
  EXPECT_EQ(read_ini_text(plain, "config file"), "[train]\nsteps = 3\n");
  const auto marked = testing::write_text("marked.cfg", "\xEF\xBB\xBF[train]\nsteps = 3\n");
  EXPECT_EQ(read_ini_text(marked, "config file"), "[train]\nsteps = 3\n");
}

TEST(InputFile, IniTextThatIsNoUtf8TextIsRefusedByName) {
  const auto utf16 = testing::write_text("utf16.cfg", std::string("\xFF\xFE[\0t\0r\0a\0i\0n\0]\0", 16));
  EXPECT_EQ(refusal(utf16), "config file '" + utf16 + "' is UTF-16 text: save it as UTF-8");
  const auto big_endian = testing::write_text("utf16be.cfg", std::string("\xFE\xFF\0[\0t", 6));
  EXPECT_EQ(refusal(big_endian), "config file '" + big_endian + "' is UTF-16 text: save it as UTF-8");
  const auto binary = testing::write_text("binary.cfg", std::string("[train]\nst\0eps", 14));
  EXPECT_EQ(refusal(binary),
            "config file '" + binary + "' holds a NUL byte (at byte 10): not text, or UTF-16 without a byte-order mark");
  const auto dir = (testing::scratch_dir() / "a_directory.cfg").string();
  std::filesystem::create_directories(dir);
  EXPECT_EQ(refusal(dir), "config file '" + dir + "' is a directory, not a file");
  EXPECT_EQ(refusal(dir + "/missing.cfg"), "config file '" + dir + "/missing.cfg' does not exist or cannot be reached");
}

TEST(InputFile, AMissingRelativePathNamesTheDirectoryItWasLookedForIn) {
  const auto here = std::filesystem::current_path().string();
  EXPECT_EQ(input_file_problem("no_such_dir/corpus.txt"),
            "'no_such_dir/corpus.txt' does not exist or cannot be reached (relative to the working directory '" + here +
                "')");
}

}  // namespace
}  // namespace lrkit
