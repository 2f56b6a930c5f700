// The reference GPT's parameter count from its shape, which FLOPs per token and the memory check use before or
// instead of building the model.
#include "lrkit/train/model_flops.hpp"

#include <gtest/gtest.h>

#include "lrkit/train/gpt.hpp"

namespace lrkit::train {
namespace {

int64_t built_parameters(const GptConfig& shape) {
  Gpt model(shape);
  int64_t count = 0;
  for (const auto& p : model->parameters()) count += p.numel();
  return count;
}

TEST(ModelFlops, TheParameterCountIsTheBuiltModels) {
  for (const GptConfig& shape : {GptConfig{256, 16, 1, 2, 16, 0.0}, GptConfig{256, 64, 2, 4, 128, 0.0},
                                 GptConfig{100, 33, 3, 8, 64, 0.1}}) {
    EXPECT_EQ(parameter_count(shape), built_parameters(shape))
        << "layers " << shape.layers << ", width " << shape.width << ", context " << shape.context;
    EXPECT_EQ(parameter_count_unbounded(shape), static_cast<double>(built_parameters(shape)));
  }
}

}  // namespace
}  // namespace lrkit::train
