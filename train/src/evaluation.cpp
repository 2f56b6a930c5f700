#include "evaluation.hpp"

#include <algorithm>

#include "lrkit/train/autocast_scope.hpp"

namespace lrkit::train {

std::vector<NamedTokens> load_eval_sets(const TrainConfig& c, const DataMixture& data) {
  std::vector<NamedTokens> sets;
  for (const auto& set : c.eval_sets()) {
    const ByteCorpus* loaded = set.path.empty() ? &data.corpus(0) : nullptr;
    for (size_t i = 0; i < data.size() && !loaded; ++i)
      if (data.corpus(i).path() == set.path) loaded = &data.corpus(i);
    sets.push_back({set.name, loaded ? *loaded : ByteCorpus::load(set.path, c.data.heldout, c.model.context)});
  }
  return sets;
}

double evaluate(Gpt& model, ByteView tokens, const TrainConfig& c, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model->eval();
  AutocastScope autocast(device, c.train.precision == Precision::bf16);
  double total = 0.0;
  const int64_t rows = std::max<int64_t>(c.train.batch / c.train.accumulation, 1);
  for (int64_t i = 0; i < c.eval.batches; ++i) {
    const Batch b = evaluation_batch(tokens, rows, c.model.context, i, c.eval.batches);
    total += model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean().item<double>();
  }
  model->train();
  return total / static_cast<double>(c.eval.batches);
}

}  // namespace lrkit::train
