#include "replicas.hpp"

#include "lrkit/distributed/hyperparameters.hpp"
#include "lrkit/train/multi_tensor_adamw.hpp"

namespace lrkit::train {

namespace {

// Two parameter groups: weight decay on matrices only (none on biases, norms, embeddings).
template <typename Optimizer, typename Options>
std::unique_ptr<torch::optim::Optimizer> grouped(Gpt& model, const Options& options, double weight_decay) {
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(model->decayed_parameters(), std::make_unique<Options>(Options(options).weight_decay(weight_decay)));
  groups.emplace_back(model->undecayed_parameters(), std::make_unique<Options>(Options(options).weight_decay(0.0)));
  return std::make_unique<Optimizer>(std::move(groups), options);
}

std::unique_ptr<torch::optim::Optimizer> make_optimizer(Gpt& model, const OptimConfig& o) {
  if (o.name == OptimizerName::sgd)
    return grouped<torch::optim::SGD>(model, torch::optim::SGDOptions(0.0).momentum(o.momentum), o.weight_decay);
  return grouped<MultiTensorAdamW>(
      model, torch::optim::AdamWOptions(0.0).betas({o.beta1, o.beta2}).eps(o.eps), o.weight_decay);
}

constexpr size_t kDecayedGroup = 0;  // see grouped()

}  // namespace

std::vector<Replica> make_replicas(const TrainConfig& c, int rank, int world_size, const torch::Device& device) {
  const int64_t per_rank = c.replicas_per_rank();
  std::vector<Replica> replicas(static_cast<size_t>(per_rank));
  for (int64_t r = 0; r < per_rank; ++r) {
    auto& replica = replicas[static_cast<size_t>(r)];
    replica.index = rank * per_rank + r;
    replica.streams = rank_streams(c, static_cast<int>(replica.index), static_cast<int>(world_size * per_rank));
    torch::manual_seed(c.train.seed);  // identical initial weights on every replica of every rank
    replica.model = Gpt(c.model);
    replica.model->to(device);
    replica.optimizer = make_optimizer(replica.model, c.optim);
    replica.parameters = replica.model->parameters();
  }
  return replicas;
}

std::vector<std::vector<torch::Tensor>> parameter_lists(const std::vector<Replica>& replicas) {
  std::vector<std::vector<torch::Tensor>> lists;
  for (const auto& r : replicas) lists.push_back(r.parameters);
  return lists;
}

std::optional<distributed::HdetEnsemble> make_hdet_ensemble(const TrainConfig& c, distributed::Collective& collective) {
  if (!c.hdet.enabled) return std::nullopt;
  std::vector<distributed::SpreadHyperparameter> spread;
  const auto names = c.hdet_spread();
  for (size_t i = 0; i < names.size(); ++i) {
    controllers::HdetConfig h = c.hdet.controller;
    h.replicas = collective.world_size() * c.hdet.replicas_per_rank;
    if (names[i] == "weight_decay") h.alpha = c.hdet.weight_decay_alpha;
    if (names[i] == "dropout") h.alpha = c.hdet.dropout_alpha;
    if (names[i] == "dropout") h.upper = c.hdet.dropout_max;
    h.seed = derive_seed(c.train.seed, 100 + i);  // its own permutations
    spread.push_back({names[i], h});
  }
  return distributed::HdetEnsemble(std::move(spread), collective, c.hdet.replicas_per_rank);
}

std::vector<Spread> spread_of(const TrainConfig& c) {
  std::vector<Spread> spread;
  for (const auto& name : c.hdet_spread())
    spread.push_back(name == "lr" ? Spread::lr : name == "weight_decay" ? Spread::weight_decay : Spread::dropout);
  return spread;
}

std::vector<double> scheduled_values(const TrainConfig& c, const std::vector<Spread>& spread, double lr) {
  std::vector<double> values;
  for (const Spread s : spread)
    values.push_back(s == Spread::lr ? lr : s == Spread::weight_decay ? c.optim.weight_decay : c.model.dropout);
  return values;
}

std::vector<std::vector<double>> apply_hyperparameters(const distributed::HdetEnsemble* ensemble, const std::vector<Spread>& spread,
                                                        std::vector<Replica>& replicas, const std::vector<double>& scheduled) {
  if (ensemble == nullptr) {
    for (auto& r : replicas) distributed::set_learning_rate(*r.optimizer, scheduled.at(0));
    return {};
  }
  std::vector<std::vector<double>> values(ensemble->size());
  for (size_t i = 0; i < ensemble->size(); ++i)
    for (int64_t g = 0; g < ensemble->replicas(); ++g) values[i].push_back(ensemble->value(i, g, scheduled.at(i)));
  for (auto& r : replicas)
    for (size_t i = 0; i < ensemble->size(); ++i) {
      const double v = values[i][static_cast<size_t>(r.index)];
      switch (spread[i]) {
        case Spread::lr: distributed::set_learning_rate(*r.optimizer, v); break;
        case Spread::weight_decay: distributed::set_weight_decay(*r.optimizer, kDecayedGroup, v); break;
        case Spread::dropout: r.model->set_dropout(v); break;
      }
    }
  return values;
}

}  // namespace lrkit::train
