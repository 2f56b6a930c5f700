// What a run's data files hold (file_contents.hpp). The expected texts are Python's: zlib.crc32 over the size as
// 8 little-endian bytes, then the file (up to 256 KiB) or its 64 blocks of 4096 bytes at i * (size - 4096) // 63.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "file_contents.hpp"
#include "test_files.hpp"

namespace lrkit::train {
namespace {

// 1000003 bytes: (i * 7) % 251, a corpus larger than the sample.
std::string patterned(size_t size) {
  std::string bytes(size, '\0');
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<char>((i * 7) % 251);
  return bytes;
}

TEST(FileContents, ASmallFileIsReadWholeAndALargeOneSampled) {
  EXPECT_EQ(file_contents(lrkit::testing::write_text("contents_small.txt", "In the beginning")),
            "16 bytes, sampled crc32:6e6a7d5c");
  EXPECT_EQ(file_contents(lrkit::testing::write_text("contents_empty.txt", "")), "0 bytes, sampled crc32:6522df69");
  EXPECT_EQ(file_contents(lrkit::testing::write_text("contents_large.bin", patterned(1000003))),
            "1000003 bytes, sampled crc32:1ccd9f92");
}

TEST(FileContents, AnotherFileBehindTheSameSizeDiffers) {
  const std::string corpus = patterned(1000003);
  const auto of = [](const std::string& name, const std::string& bytes) {
    return *file_contents(lrkit::testing::write_text(name, bytes));
  };
  const std::string original = of("contents_original.bin", corpus);
  std::string edited = corpus;
  edited[0] = 'x';  // the first block is sampled
  EXPECT_NE(of("contents_first.bin", edited), original);
  edited = corpus;
  edited.back() = 'x';  // and the last
  EXPECT_NE(of("contents_last.bin", edited), original);
  edited = corpus;
  edited[(1000003 - 4096) / 63 * 31 + 100] = 'x';  // and one in the middle
  EXPECT_NE(of("contents_middle.bin", edited), original);
  EXPECT_NE(of("contents_grown.bin", corpus + "x"), original);
  EXPECT_NE(of("contents_rotated.bin", corpus.substr(1) + corpus.substr(0, 1)), original);
  EXPECT_EQ(of("contents_copy.bin", corpus), original) << "a copy under another name holds the same";
}

TEST(FileContents, AFileThatCannotBeReadHasNone) {
  EXPECT_EQ(file_contents((lrkit::testing::scratch_dir() / "contents_missing.txt").string()), std::nullopt);
  EXPECT_EQ(file_contents(lrkit::testing::scratch_dir().string()), std::nullopt) << "a directory";
  EXPECT_EQ(file_contents("/dev/null"), std::nullopt) << "a device";
}

// Opened for reading, a named pipe waits for a writer. The resume's and the sweep's checks refuse a data file that is
// no regular file before they compare contents, but this function must not hang on their order.
TEST(FileContents, ANamedPipeHasNoneAtOnce) {
  const std::string fifo = (lrkit::testing::scratch_dir() / "contents_fifo").string();
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  auto read = std::async(std::launch::async, [&] { return file_contents(fifo); });
  if (read.wait_for(std::chrono::seconds(5)) != std::future_status::ready) {
    const int writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);  // lets the waiting open return
    read.wait();
    ::close(writer);
    FAIL() << "file_contents waited for a writer of the named pipe";
  }
  EXPECT_EQ(read.get(), std::nullopt);
}

TEST(FileContents, TheFilesOfARunAreNamedAsItsSettingsNameThem) {
  TrainConfig c;
  c.data.path = "data/kjv.txt";
  c.eval.sets = "heldout, news=data/sotu.txt";
  using Named = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(run_files_read(c), (Named{{"data.path", "data/kjv.txt"}, {"eval.sets news", "data/sotu.txt"}}));
  // A mixture's `heldout` is a set per source, in the sources' files; a set in a source's file adds no file.
  c.data.sources = "bible=data/kjv.txt, speeches=data/sotu.txt";
  EXPECT_EQ(run_files_read(c), (Named{{"data.sources bible", "data/kjv.txt"}, {"data.sources speeches", "data/sotu.txt"}}));
  c.eval.sets = "heldout, old=data/old.txt";
  EXPECT_EQ(run_files_read(c), (Named{{"data.sources bible", "data/kjv.txt"},
                                      {"data.sources speeches", "data/sotu.txt"},
                                      {"eval.sets old", "data/old.txt"}}));
}

}  // namespace
}  // namespace lrkit::train
