// Batch sampling: pure functions of (seed, step, row), and the locality knob.
#include "lrkit/train/byte_corpus.hpp"

#include <gtest/gtest.h>

#include <fstream>

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
