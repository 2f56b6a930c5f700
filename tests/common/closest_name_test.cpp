// The "did you mean" of unknown keys (lrkit/common/closest_name.hpp).
#include "lrkit/common/closest_name.hpp"

#include <gtest/gtest.h>

namespace lrkit {
namespace {

TEST(ClosestName, EditDistanceCountsASwapOfNeighboursAsOneEdit) {
  EXPECT_EQ(edit_distance("train", "train"), 0u);
  EXPECT_EQ(edit_distance("trian", "train"), 1u);
  EXPECT_EQ(edit_distance("stepz", "steps"), 1u);
  EXPECT_EQ(edit_distance("", "abc"), 3u);
  EXPECT_EQ(edit_distance("steps", "seeds"), 2u);
}

TEST(ClosestName, ATypoFindsItsKeyAndAnUnrelatedNameNothing) {
  const std::vector<std::string> keys = {"train.steps", "train.seed", "model.layers", "sweep.seeds", "out"};
  EXPECT_EQ(closest_name("trian.steps", keys), "train.steps");
  EXPECT_EQ(closest_name("model.layerz", keys), "model.layers");
  EXPECT_EQ(closest_name("modle.layers", keys), "model.layers");
  EXPECT_EQ(closest_name("steps", keys), "train.steps") << "a key without its section";
  EXPECT_EQ(closest_name("sweep.steps", keys), "train.steps") << "the same key in another section";
  EXPECT_EQ(closest_name("sweep.steps", {"sweep.seeds", "sweep.budgets"}), std::nullopt)
      << "two edits from sweep.seeds: too far for a short key";
  EXPECT_EQ(closest_name("zzz", keys), std::nullopt);
  EXPECT_EQ(closest_name("seed", {"train.seed", "data.seed"}), std::nullopt) << "two keys end so: no guess";
  EXPECT_EQ(closest_name("TRAIN.STEPS", keys), "train.steps") << "five letters in another case: too far as edits";
  EXPECT_EQ(closest_name("Model.Layers", keys), "model.layers");
}

}  // namespace
}  // namespace lrkit
