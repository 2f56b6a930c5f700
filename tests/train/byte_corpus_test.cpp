// Batch sampling: pure functions of (seed, step, row), and the locality knob.
#include "lrkit/train/byte_corpus.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "mapped_file.hpp"

#include "test_files.hpp"

namespace lrkit::train {
namespace {

std::vector<uint8_t> counting_tokens(size_t n) {
  std::vector<uint8_t> t(n);
  for (size_t i = 0; i < n; ++i) t[i] = static_cast<uint8_t>(i % 251);
  return t;
}

TEST(ByteCorpus, ADeviceOrDirectoryIsRefusedNotReadForever) {
  try {
    ByteCorpus::load("/dev/zero", 0.1, 16);
    FAIL();
  } catch (const CorpusError& e) {
    EXPECT_EQ(std::string(e.what()), "data file '/dev/zero' is not a regular file (a device or pipe may never end)");
  }
  EXPECT_THROW(ByteCorpus::load("/tmp", 0.1, 16), CorpusError);
}

TEST(ByteCorpus, CheckRefusesWhatLoadRefusesWithTheSameMessage) {
  const auto dir = lrkit::testing::scratch_dir();
  const auto small = (dir / "small.txt").string(), fits = (dir / "fits.txt").string();
  std::ofstream(small) << std::string(40, 'a');   // 4 held-out bytes: too few for context 16
  std::ofstream(fits) << std::string(400, 'a');   // 40 held-out bytes, 360 to train on
  for (const auto& path : {small, (dir / "missing.txt").string(), std::string("/dev/zero"), dir.string()}) {
    std::string checked, loaded;
    try {
      ByteCorpus::check(path, 0.1, 16);
    } catch (const CorpusError& e) {
      checked = e.what();
    }
    try {
      ByteCorpus::load(path, 0.1, 16);
    } catch (const CorpusError& e) {
      loaded = e.what();
    }
    EXPECT_FALSE(checked.empty()) << path;
    EXPECT_EQ(checked, loaded) << path;
  }
  EXPECT_NO_THROW(ByteCorpus::check(fits, 0.1, 16));
  EXPECT_EQ(ByteCorpus::load(fits, 0.1, 16).heldout().size(), 40u);
  EXPECT_THROW(ByteCorpus::check(fits, 0.5, 16), CorpusError);
}

TEST(ByteCorpus, TheMappedFileIsReadWholeAndCopiesShareIt) {
  std::vector<uint8_t> bytes(100000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>((i * 7919) % 256);
  const auto path = (lrkit::testing::scratch_dir() / "mapped.bin").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), 100000);
  const ByteCorpus corpus = ByteCorpus::load(path, 0.1, 16);
  ASSERT_EQ(corpus.train().size(), 90000u);
  ASSERT_EQ(corpus.heldout().size(), 10000u);
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.begin() + 90000, corpus.train().data()));
  EXPECT_TRUE(std::equal(bytes.begin() + 90000, bytes.end(), corpus.heldout().data()));
  const ByteCorpus copy = corpus;
  EXPECT_EQ(copy.train().data(), corpus.train().data()) << "a copy shares the mapping";
  const auto batch = sample_batch(corpus.train(), 0, 3, 16, {1, 2});
  const auto from_vector = sample_batch(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 90000), 0, 3, 16, {1, 2});
  EXPECT_TRUE(torch::equal(batch.inputs, from_vector.inputs));
}

// A corpus file cut short under the run: a read past its new end raised SIGBUS, which killed the process without a
// word. Between steps require_whole names it; a read that races the cut ends in the same one line, exit 1.
TEST(ByteCorpus, AFileCutShortUnderTheMappingIsNamedNotABusError) {
  const auto path = (lrkit::testing::scratch_dir() / "cut_short.txt").string();
  std::ofstream(path) << std::string(100000, 'a');
  const ByteCorpus corpus = ByteCorpus::load(path, 0.1, 16);
  EXPECT_NO_THROW(corpus.require_whole());
  std::filesystem::resize_file(path, 10);
  try {
    corpus.require_whole();
    FAIL() << "a cut file passed";
  } catch (const DataFileChangedError& e) {
    EXPECT_EQ(std::string(e.what()), "data file '" + path + "' was cut short while the run read it (100000 bytes "
                                     "when the run started, 10 now): restore it and continue with --resume auto");
  }
  const auto stderr_path = path + ".stderr";
  const pid_t child = fork();
  if (child == 0) {
    const int err = ::open(stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(err, STDERR_FILENO);
    volatile uint8_t byte = corpus.train()[50000];  // past the new end: SIGBUS
    ::_exit(byte == 'a' ? 42 : 43);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WEXITSTATUS(status), 1);
  std::ifstream in(stderr_path);
  const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(message, "lrkit: data file '" + path + "' was cut short while the run read it (bus error past its new "
                     "end): the run log and checkpoints written so far are kept; restore the file and continue with "
                     "--resume auto\n");
}

// A file rewritten in place changes the mapped pages: named, with its sampled contents then and now. A file replaced
// under its name (a new file renamed over it) leaves the mapping reading the old one: nothing changed for the run.
TEST(ByteCorpus, AFileRewrittenInPlaceIsAChangeAndOneReplacedUnderItsNameIsNot) {
  const auto path = (lrkit::testing::scratch_dir() / "rewritten.txt").string();
  std::ofstream(path) << std::string(100000, 'a');
  const ByteCorpus corpus = ByteCorpus::load(path, 0.1, 16);
  EXPECT_EQ(corpus.change(), std::nullopt);
  const auto replacement = path + ".new";
  std::ofstream(replacement) << std::string(100000, 'b');
  std::filesystem::rename(replacement, path);
  EXPECT_EQ(corpus.change(), std::nullopt) << "the mapping reads the file it mapped";
  const ByteCorpus replaced = ByteCorpus::load(path, 0.1, 16);
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(99990);
    file << "c";  // in the last block, which is sampled
  }
  EXPECT_EQ(replaced.train()[0], 'b');
  EXPECT_EQ(replaced.heldout()[99990 - 90000], 'c') << "the pages changed under the mapping";
  const auto change = replaced.change();
  ASSERT_TRUE(change.has_value());
  EXPECT_EQ(change->rfind("file '" + path + "' changed while the run read it (100000 bytes, sampled crc32:", 0), 0u)
      << *change;
  EXPECT_NE(change->find(" when the run started, 100000 bytes, sampled crc32:"), std::string::npos) << *change;
  EXPECT_EQ(change->substr(change->size() - 5), " now)") << *change;
}

TEST(ByteCorpus, RowsArePureFunctionsOfSeedStepAndIndex) {
  const auto tokens = counting_tokens(100000);
  const auto whole = sample_batch(tokens, 0, 8, 16, {7, 3});
  const auto tail = sample_batch(tokens, 4, 4, 16, {7, 3});
  EXPECT_TRUE(torch::equal(whole.inputs.slice(0, 4, 8), tail.inputs));
  EXPECT_TRUE(torch::equal(whole.targets.slice(1, 0, 15), whole.inputs.slice(1, 1, 16)));
  EXPECT_FALSE(torch::equal(whole.inputs, sample_batch(tokens, 0, 8, 16, {7, 4}).inputs));
  EXPECT_FALSE(torch::equal(whole.inputs, sample_batch(tokens, 0, 8, 16, {8, 3}).inputs));
}

TEST(ByteCorpus, LocalityDrawsAStepsRowsFromOneRegion) {
  // Tokens that name their 1000-byte region: every row of a step must share one.
  std::vector<uint8_t> tokens(200000);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<uint8_t>(i / 1000);
  int regions_seen = 0;
  std::vector<bool> seen(256, false);
  for (int64_t step = 0; step < 20; ++step) {
    const auto b = sample_batch(tokens, 0, 16, 8, {5, step, 1000});
    const auto region = b.inputs[0][0].item<int64_t>();
    for (int64_t r = 0; r < 16; ++r) EXPECT_EQ(b.inputs[r][0].item<int64_t>(), region) << "row " << r << " starts in the step's region";
    if (!seen[static_cast<size_t>(region)]) ++regions_seen;
    seen[static_cast<size_t>(region)] = true;
  }
  EXPECT_GT(regions_seen, 10) << "steps move through the corpus";
  int same = 0;  // another seed (a desynchronized rank) reads elsewhere
  for (int64_t step = 0; step < 20; ++step)
    same += sample_batch(tokens, 0, 1, 8, {5, step, 1000}).inputs[0][0].item<int64_t>() ==
            sample_batch(tokens, 0, 1, 8, {6, step, 1000}).inputs[0][0].item<int64_t>();
  EXPECT_LT(same, 5);
}

}  // namespace
}  // namespace lrkit::train
