// The model replicas one worker process trains: one for plain data
// parallelism, hdet.replicas_per_rank for HDET (replica g = rank * R + r,
// with the data rows and dropout stream of rank g of a world of N = ranks x R).
#pragma once

#include <torch/torch.h>

#include <memory>
#include <optional>
#include <vector>

#include "lrkit/train/gpt.hpp"
#include "lrkit/distributed/hdet_ensemble.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct Replica {
  int64_t index = 0;  // global replica index
  RankStreams streams;
  Gpt model{nullptr};
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<torch::Tensor> parameters;
};

// This rank's replicas, each with the initial weights of train.seed.
std::vector<Replica> make_replicas(const TrainConfig& config, int rank, int world_size, const torch::Device& device);

// Replica r's parameter list, for the replica-wide averages.
std::vector<std::vector<torch::Tensor>> parameter_lists(const std::vector<Replica>& replicas);

// The HDET controllers of TrainConfig::hdet_spread(), or nothing when HDET is off.
std::optional<distributed::HdetEnsemble> make_hdet_ensemble(const TrainConfig& config, distributed::Collective& collective);

// What HDET spreads, in TrainConfig::hdet_spread() order (the learning rate first).
enum class Spread { lr, weight_decay, dropout };
std::vector<Spread> spread_of(const TrainConfig& config);

// The scheduled (uncorrected) value of every spread hyper-parameter at `lr`.
std::vector<double> scheduled_values(const TrainConfig& config, const std::vector<Spread>& spread, double lr);

// Sets each replica's learning rate (and, when spread, weight decay and
// dropout) for one step from the scheduled values (scheduled_values(); without
// HDET just the learning rate); returns every spread value of every replica,
// [spread index][global replica], for the run log.
std::vector<std::vector<double>> apply_hyperparameters(const distributed::HdetEnsemble* ensemble, const std::vector<Spread>& spread,
                                                        std::vector<Replica>& replicas, const std::vector<double>& scheduled);

}  // namespace lrkit::train
