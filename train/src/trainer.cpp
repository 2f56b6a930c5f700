#include "lrkit/train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <tuple>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/collective.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/run_log.hpp"

namespace lrkit::train {

namespace {

using Clock = std::chrono::steady_clock;

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

// The one place a learning rate enters the optimizer.
void apply_learning_rate(torch::optim::Optimizer& optimizer, double lr) {
  for (auto& group : optimizer.param_groups()) group.options().set_lr(lr);
}

struct GradientNorms {
  double l2 = 0.0, l1 = 0.0;
};

// Both norms of the whole gradient (l2 for SGD-type and l1 for Adam-type
// refinement), then PyTorch's clip_grad_norm_ rule: scale by
// clip / (l2 + 1e-6) when that is below 1. One pass; norms before clipping.
GradientNorms measure_and_clip(const std::vector<torch::Tensor>& parameters, double clip) {
  std::vector<torch::Tensor> l2_parts, l1_parts;
  for (const auto& p : parameters) {
    if (!p.grad().defined()) continue;
    l2_parts.push_back(p.grad().pow(2).sum());
    l1_parts.push_back(p.grad().abs().sum());
  }
  if (l2_parts.empty()) return {};
  const auto norms = torch::stack({torch::stack(l2_parts).sum().sqrt(), torch::stack(l1_parts).sum()}).to(torch::kCPU);
  const GradientNorms out{norms[0].item<double>(), norms[1].item<double>()};
  if (clip > 0 && clip / (out.l2 + 1e-6) < 1.0) {
    torch::NoGradGuard no_grad;
    for (const auto& p : parameters)
      if (p.grad().defined()) p.grad().mul_(clip / (out.l2 + 1e-6));
  }
  return out;
}

// Applies --resume / --init-from; returns the step to continue from.
int64_t restore(const TrainConfig& c, Gpt& model, torch::optim::Optimizer& optimizer, std::ostream& progress) {
  if (!c.init_from.empty()) {
    load_checkpoint(c.init_from, model, nullptr);
    progress << "initialized weights from " << c.init_from << std::endl;
    return 0;
  }
  if (c.resume.empty()) return 0;
  const auto path = c.resume == "auto" ? latest_checkpoint(c.out) : std::optional<std::string>(c.resume);
  if (!path) {
    progress << "resume: no checkpoint in " << c.out << ", starting from step 0" << std::endl;
    return 0;
  }
  const CheckpointInfo info = load_checkpoint(*path, model, &optimizer);
  if (info.schedule_spec != c.schedule)
    throw std::invalid_argument("checkpoint '" + *path + "' was trained with schedule '" + info.schedule_spec +
                                "' but the config says '" + c.schedule + "'");
  if (info.step >= c.train.steps)
    throw std::invalid_argument("checkpoint '" + *path + "' is at step " + std::to_string(info.step) +
                                ", not before train.steps = " + std::to_string(c.train.steps));
  progress << "resumed from " << *path << " at step " << info.step << std::endl;
  return info.step;
}

// Sums gradients over ranks in flattened buckets (one collective per bucket,
// not per parameter) and divides by the world size.
void all_reduce_gradients(const std::vector<torch::Tensor>& parameters, Collective& collective, double bucket_mb) {
  const auto limit = static_cast<int64_t>(bucket_mb * 1024 * 1024 / sizeof(float));
  std::vector<torch::Tensor> bucket;
  int64_t filled = 0;
  auto reduce = [&] {
    if (bucket.empty()) return;
    std::vector<torch::Tensor> flat;
    for (const auto& g : bucket) flat.push_back(g.reshape({-1}));
    auto buffer = torch::cat(flat);
    collective.all_reduce_sum(buffer);
    buffer.div_(collective.world_size());
    int64_t offset = 0;
    for (auto& g : bucket) {
      g.copy_(buffer.narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
    bucket.clear();
    filled = 0;
  };
  for (const auto& p : parameters) {
    if (!p.grad().defined()) continue;
    bucket.push_back(p.grad());
    filled += p.grad().numel();
    if (filled >= limit) reduce();
  }
  reduce();
}

double local_gradient_norm(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> parts;
  for (const auto& p : parameters)
    if (p.grad().defined()) parts.push_back(p.grad().pow(2).sum());
  return parts.empty() ? 0.0 : torch::stack(parts).sum().sqrt().item<double>();
}

// Every rank's (loss, gradient norm) on every rank: one all-reduce of a
// [2, world] tensor in which each rank fills its own column.
std::pair<std::vector<double>, std::vector<double>> gather_rank_metrics(double loss, double grad_norm,
                                                                        Collective& collective) {
  const int world = collective.world_size();
  auto table = torch::zeros({2, world}, torch::kDouble);
  table[0][collective.rank()] = loss;
  table[1][collective.rank()] = grad_norm;
  collective.all_reduce_sum(table);
  const auto* v = table.data_ptr<double>();
  return {std::vector<double>(v, v + world), std::vector<double>(v + world, v + 2 * world)};
}

double evaluate(Gpt& model, const ByteCorpus& corpus, const TrainConfig& c, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model->eval();
  double total = 0.0;
  const int64_t rows = std::max<int64_t>(c.train.batch / c.train.accumulation, 1);
  for (int64_t i = 0; i < c.eval.batches; ++i) {
    const Batch b = evaluation_batch(corpus.heldout(), rows, c.model.context, i, c.eval.batches);
    total += model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean().item<double>();
  }
  model->train();
  return total / static_cast<double>(c.eval.batches);
}

std::string format_duration(double seconds) {
  char buf[32];
  const auto s = static_cast<long>(seconds);
  std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  return buf;
}

}  // namespace

TrainSummary run_training(const TrainConfig& c, std::ostream& progress_out) {
  c.validate();
  const auto schedule = schedules::parse_schedule(c.schedule, c.train.steps);
  if (c.train.device == "cuda" && !torch::cuda::is_available())
    throw std::invalid_argument("train.device=cuda but no CUDA device is available to this LibTorch");
  const DistributedEnv env = distributed_env_from_environment();
  const torch::Device device = c.train.device == "cuda" ? torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.local_rank)) : torch::Device(torch::kCPU);
  if (c.train.batch % (env.world_size * c.train.accumulation) != 0)
    throw std::invalid_argument("train.batch (" + std::to_string(c.train.batch) + ") must be a multiple of workers (" +
                                std::to_string(env.world_size) + ") x train.accumulation (" +
                                std::to_string(c.train.accumulation) + ")");
  // Each local worker gets its share of the cores, or they thrash.
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(static_cast<int>(c.train.threads > 0 ? c.train.threads : std::max<int64_t>(1, cores / env.local_world_size)));
  const auto collective = env.world_size > 1
                              ? make_c10d_collective(env, device, std::chrono::seconds(c.dist.timeout_s))
                              : make_single_process_collective();
  const bool lead = collective->rank() == 0;
  std::ostream null_stream(nullptr);
  std::ostream& progress = lead ? progress_out : null_stream;
  torch::manual_seed(c.train.seed);  // identical initial weights on every rank

  const ByteCorpus corpus = ByteCorpus::load(c.data.path, c.data.heldout, c.model.context);
  Gpt model(c.model);
  model->to(device);
  auto optimizer = make_optimizer(model, c.optim);
  const auto parameters = model->parameters();
  const int64_t start_step = restore(c, model, *optimizer, progress);
  std::optional<RunLog> log;  // written by rank 0 only
  if (lead) {
    log.emplace(c, env.world_size, start_step);
    progress << "run log: " << log->path() << std::endl;
  }

  const int64_t rank_rows = c.train.batch / env.world_size;
  const int64_t micro_rows = rank_rows / c.train.accumulation;
  const double tokens_per_step = static_cast<double>(c.train.batch * c.model.context);
  TrainSummary summary;
  const auto start = Clock::now();
  auto window_start = start;
  double window_loss = 0.0;
  int64_t window_steps = 0;

  progress << "training on " << c.data.path << " with " << env.world_size << " worker(s): steps " << start_step
           << ".." << c.train.steps << ", schedule " << c.schedule << std::endl;
  std::string last_checkpoint;
  for (int64_t step = start_step; step < c.train.steps; ++step) {
    optimizer->zero_grad();
    torch::Tensor local_loss = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    for (int64_t micro = 0; micro < c.train.accumulation; ++micro) {
      const int64_t first_row = collective->rank() * rank_rows + micro * micro_rows;
      const Batch b = sample_batch(corpus.train(), first_row, micro_rows, c.model.context, {c.train.seed, step});
      const auto loss = model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean() /
                        static_cast<double>(c.train.accumulation);
      loss.backward();
      local_loss += loss.detach();
    }
    double step_loss = local_loss.item<double>();  // one host sync per step, not per micro-batch
    // Each worker's loss and gradient norm before the all-reduce; the global
    // loss is their mean, so it needs no collective of its own.
    std::vector<double> rank_loss = {step_loss}, rank_grad_norm;
    if (collective->world_size() > 1) {
      std::tie(rank_loss, rank_grad_norm) = gather_rank_metrics(step_loss, local_gradient_norm(parameters), *collective);
      step_loss = std::accumulate(rank_loss.begin(), rank_loss.end(), 0.0) / static_cast<double>(rank_loss.size());
      all_reduce_gradients(parameters, *collective, c.dist.bucket_mb);
    }
    const bool finite = std::isfinite(step_loss);
    if (!finite && c.train.nonfinite == "stop") {
      if (log) log->flush();
      throw std::runtime_error("non-finite training loss " + std::to_string(step_loss) + " at step " +
                               std::to_string(step) + "; last good checkpoint: " +
                               (last_checkpoint.empty() ? std::string("none") : last_checkpoint) +
                               " (train.nonfinite=skip skips such updates)");
    }
    const GradientNorms norms = measure_and_clip(parameters, c.optim.clip);
    if (rank_grad_norm.empty()) rank_grad_norm = {norms.l2};  // one worker: its norm is the global one
    const double lr = schedule(step);
    apply_learning_rate(*optimizer, lr);
    if (finite) {
      optimizer->step();
    } else {
      progress << "step " << step << ": non-finite loss, update skipped" << std::endl;
    }
    if (log) log->record({step, lr, step_loss, norms.l2, norms.l1, tokens_per_step * static_cast<double>(step + 1),
                std::chrono::duration<double>(Clock::now() - start).count(), rank_loss, rank_grad_norm});

    summary.losses.push_back(step_loss);
    window_loss += step_loss;
    ++window_steps;
    const bool last = step + 1 == c.train.steps;
    if (lead && (last || (c.checkpoint.every > 0 && (step + 1) % c.checkpoint.every == 0))) {
      log->flush();  // the log never lags behind a checkpoint
      last_checkpoint = save_checkpoint(c.out, c.checkpoint.keep, step + 1, model, *optimizer, c.schedule);
    }
    if ((step + 1) % c.train.log_every == 0 || last) {
      const auto now = Clock::now();
      const double window_seconds = std::chrono::duration<double>(now - window_start).count();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const double tps = tokens_per_step * static_cast<double>(window_steps) / std::max(window_seconds, 1e-9);
      const double eta = elapsed / static_cast<double>(step + 1 - start_step) * static_cast<double>(c.train.steps - step - 1);
      char line[200];
      std::snprintf(line, sizeof line, "step %6lld/%lld  loss %.4f  lr %.3e  %8.0f tok/s  ETA %s",
                    static_cast<long long>(step + 1), static_cast<long long>(c.train.steps),
                    window_loss / static_cast<double>(window_steps), lr, tps, format_duration(eta).c_str());
      progress << line << std::endl;
      summary.final_loss = window_loss / static_cast<double>(window_steps);
      window_loss = 0.0;
      window_steps = 0;
      window_start = now;
    }
    if (lead && c.eval.every > 0 && (step + 1) % c.eval.every == 0 && !last) {
      const double eval_loss = evaluate(model, corpus, c, device);
      log->record_eval("heldout", step + 1, eval_loss);
      progress << "eval   step " << step + 1 << "  heldout loss " << eval_loss << std::endl;
    }
  }
  summary.steps = c.train.steps;
  summary.checkpoint = last_checkpoint;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.tokens_per_second = tokens_per_step * static_cast<double>(c.train.steps - start_step) / summary.seconds;
  if (lead) {
    summary.final_eval_loss = evaluate(model, corpus, c, device);
    log->record_eval("heldout", c.train.steps, summary.final_eval_loss);
    log->flush();
    summary.log_path = log->path();
  }
  return summary;
}

}  // namespace lrkit::train
