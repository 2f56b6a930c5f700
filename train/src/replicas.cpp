#include "replicas.hpp"

#include "lrkit/train/hyperparameters.hpp"

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
  if (o.name == "sgd")
    return grouped<torch::optim::SGD>(model, torch::optim::SGDOptions(0.0).momentum(o.momentum), o.weight_decay);
  return grouped<torch::optim::AdamW>(
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

std::optional<HdetEnsemble> make_hdet_ensemble(const TrainConfig& c, Collective& collective) {
  if (!c.hdet.enabled) return std::nullopt;
  std::vector<SpreadHyperparameter> spread;
  const auto names = c.hdet_spread();
  for (size_t i = 0; i < names.size(); ++i) {
    controllers::HdetConfig h;
    h.replicas = collective.world_size() * c.hdet.replicas_per_rank;
    h.alpha = names[i] == "lr" ? c.hdet.alpha : names[i] == "weight_decay" ? c.hdet.weight_decay_alpha : c.hdet.dropout_alpha;
    h.sync_every = c.hdet.sync_every;
    h.auto_lr = c.hdet.auto_lr;
    h.warmup_steps = c.hdet.warmup_steps;
    h.sigma = c.hdet.sigma;
    h.standardize = c.hdet.standardize;
    h.beta = c.hdet.beta;
    h.meta_lr = c.hdet.meta_lr;
    h.min_scale = c.hdet.min_scale;
    h.max_scale = c.hdet.max_scale;
    h.paper_mode = c.hdet.paper_mode;
    if (names[i] == "dropout") h.upper = c.hdet.dropout_max;
    h.seed = derive_seed(c.train.seed, 100 + i);  // its own permutations
    spread.push_back({names[i], h});
  }
  return HdetEnsemble(std::move(spread), collective, c.hdet.replicas_per_rank);
}

std::vector<double> scheduled_values(const TrainConfig& c, double lr) {
  std::vector<double> values;
  for (const auto& name : c.hdet_spread())
    values.push_back(name == "lr" ? lr : name == "weight_decay" ? c.optim.weight_decay : c.model.dropout);
  return values;
}

std::vector<std::vector<double>> apply_hyperparameters(const HdetEnsemble* ensemble, std::vector<Replica>& replicas,
                                                        const std::vector<double>& scheduled) {
  if (ensemble == nullptr) {
    for (auto& r : replicas) set_learning_rate(*r.optimizer, scheduled.at(0));
    return {};
  }
  std::vector<std::vector<double>> values(ensemble->size());
  for (size_t i = 0; i < ensemble->size(); ++i)
    for (int64_t g = 0; g < ensemble->replicas(); ++g) values[i].push_back(ensemble->value(i, g, scheduled.at(i)));
  for (auto& r : replicas)
    for (size_t i = 0; i < ensemble->size(); ++i) {
      const double v = values[i][static_cast<size_t>(r.index)];
      const auto& name = ensemble->name(i);
      if (name == "lr") set_learning_rate(*r.optimizer, v);
      if (name == "weight_decay") set_weight_decay(*r.optimizer, kDecayedGroup, v);
      if (name == "dropout") r.model->set_dropout(v);
    }
  return values;
}

}  // namespace lrkit::train
