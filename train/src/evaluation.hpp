// Held-out evaluation: the named sets a run scores (ALGORITHMS-free: the mean
// next-byte loss over fixed windows of each set's held-out tail).
#pragma once

#include <torch/torch.h>

#include <string>
#include <vector>

#include "lrkit/train/data_mixture.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct NamedTokens {
  std::string name;
  ByteCorpus corpus;  // its held-out tail is the set
};

// The evaluation sets: held-out tails of the training sources (loaded already) and of other files.
std::vector<NamedTokens> load_eval_sets(const TrainConfig& config, const DataMixture& data);

// Mean loss over the set's fixed evaluation windows.
double evaluate(Gpt& model, ByteView tokens, const TrainConfig& config, const torch::Device& device);

}  // namespace lrkit::train
