#include "lrkit/train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/collective.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/gradient_sync.hpp"
#include "lrkit/train/learning_rate.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "lrkit/train/run_log.hpp"
#include "autocast_scope.hpp"

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

// Mean loss over the set's fixed evaluation windows.
double evaluate(Gpt& model, const std::vector<uint8_t>& tokens, const TrainConfig& c, const torch::Device& device) {
  torch::NoGradGuard no_grad;
  model->eval();
  AutocastScope autocast(device, c.train.precision == "bf16");
  double total = 0.0;
  const int64_t rows = std::max<int64_t>(c.train.batch / c.train.accumulation, 1);
  for (int64_t i = 0; i < c.eval.batches; ++i) {
    const Batch b = evaluation_batch(tokens, rows, c.model.context, i, c.eval.batches);
    total += model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean().item<double>();
  }
  model->train();
  return total / static_cast<double>(c.eval.batches);
}

struct NamedTokens {
  std::string name;
  std::vector<uint8_t> tokens;
};

// The evaluation sets: the training file's held-out tail and other files' tails.
std::vector<NamedTokens> load_eval_sets(const TrainConfig& c, const ByteCorpus& corpus) {
  std::vector<NamedTokens> sets;
  for (const auto& set : c.eval_sets())
    sets.push_back({set.name, set.path.empty() ? corpus.heldout()
                                               : ByteCorpus::load(set.path, c.data.heldout, c.model.context).heldout()});
  return sets;
}

// What one optimizer step measured, read back to the host in one transfer.
struct StepScalars {
  diagnostics::RankScalars ranks;
  double grad_norm_l1 = 0.0;
  std::vector<double> sketches;  // [world, sketch dim] row-major, when sketched this step
};

// Every rank's (loss, ||g_k||^2, g_k . g_bar[, sketch]) by one all-gather, and
// the global norms, in one device-to-host copy.
StepScalars gather_step_scalars(Collective& collective, const torch::Tensor& local_loss, const GradientSyncResult& sync,
                                const torch::Tensor& sketch) {
  const auto device = local_loss.device();
  const auto nan = torch::full({1}, std::numeric_limits<double>::quiet_NaN(), torch::TensorOptions().dtype(torch::kDouble).device(device));
  std::vector<torch::Tensor> mine = {local_loss.reshape({1}), sync.local_sq.reshape({1}),
                                     sync.dot_with_mean.defined() ? sync.dot_with_mean.reshape({1}) : nan};
  if (sketch.defined()) mine.push_back(sketch);
  const auto gathered = collective.all_gather(torch::cat(mine));  // [world, 3 (+ sketch dim)]
  const auto host = torch::cat({gathered.reshape({-1}), sync.mean_l2.reshape({1}), sync.mean_l1.reshape({1}),
                                sync.normalized_sum_sq.defined() ? sync.normalized_sum_sq.reshape({1}) : nan})
                        .to(torch::kCPU);
  const double* v = host.data_ptr<double>();
  const int64_t world = gathered.size(0), width = gathered.size(1);
  StepScalars out;
  for (int64_t r = 0; r < world; ++r) {
    const double* row = v + r * width;
    out.ranks.loss.push_back(row[0]);
    out.ranks.grad_norm.push_back(std::sqrt(row[1]));
    if (sync.dot_with_mean.defined()) out.ranks.dot_with_mean.push_back(row[2]);
    out.sketches.insert(out.sketches.end(), row + 3, row + width);
  }
  out.ranks.mean_grad_norm = v[world * width];
  out.grad_norm_l1 = v[world * width + 1];
  out.ranks.normalized_sum_sq = v[world * width + 2];
  return out;
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
  c.desynced_ranks(env.world_size);  // names a rank beyond the world before anything starts
  // Each local worker gets its share of the cores, or they thrash.
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(static_cast<int>(c.train.threads > 0 ? c.train.threads : std::max<int64_t>(1, cores / env.local_world_size)));
  const auto collective = env.world_size > 1
                              ? make_c10d_collective(env, device, std::chrono::seconds(c.dist.timeout_s))
                              : make_single_process_collective();
  const int world = collective->world_size();
  const bool lead = collective->rank() == 0;
  const RankStreams streams = rank_streams(c, collective->rank(), world);  // after the group exists
  std::ostream null_stream(nullptr);
  std::ostream& progress = lead ? progress_out : null_stream;
  const bool bf16 = c.train.precision == "bf16";

  const ByteCorpus corpus = ByteCorpus::load(c.data.path, c.data.heldout, c.model.context);
  const auto eval_sets = lead ? load_eval_sets(c, corpus) : std::vector<NamedTokens>();
  torch::manual_seed(c.train.seed);  // identical initial weights on every rank
  Gpt model(c.model);
  model->to(device);
  auto optimizer = make_optimizer(model, c.optim);
  const auto parameters = model->parameters();
  const int64_t start_step = restore(c, model, *optimizer, progress);
  std::optional<RunLog> log;  // written by rank 0 only
  if (lead) {
    log.emplace(c, world, start_step);
    progress << "run log: " << log->path() << std::endl;
  }
  const GradientSyncOptions sync_options{c.dist.bucket_mb, c.diagnostics.enabled,
                                         c.diagnostics.enabled && c.diagnostics.pairwise == "exact" && world > 1};
  const bool sketching = c.diagnostics.enabled && world > 1 && (c.diagnostics.pairwise == "sketch" || c.diagnostics.matrix_every > 0);
  std::optional<GradientSketch> sketch;  // the same projection on every rank
  if (sketching) sketch.emplace(parameters, c.diagnostics.sketch_dim, derive_seed(c.train.seed, 4));

  const int64_t micro_rows = c.train.batch / world / c.train.accumulation;
  const double tokens_per_step = static_cast<double>(c.train.batch * c.model.context);
  TrainSummary summary;
  const auto start = Clock::now();
  auto window_start = start;
  double window_loss = 0.0;
  int64_t window_steps = 0;

  progress << "training on " << c.data.path << " with " << world << " worker(s): steps " << start_step
           << ".." << c.train.steps << ", schedule " << c.schedule << std::endl;
  std::string last_checkpoint;
  for (int64_t step = start_step; step < c.train.steps; ++step) {
    // Dropout masks are a function of (rank stream, step): a resumed run draws the same ones.
    torch::manual_seed(derive_seed(streams.dropout_seed, static_cast<uint64_t>(step)));
    optimizer->zero_grad();
    torch::Tensor local_loss = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    for (int64_t micro = 0; micro < c.train.accumulation; ++micro) {
      const Batch b = sample_batch(corpus.train(), streams.first_row + micro * micro_rows, micro_rows, c.model.context,
                                   {streams.data_seed, step, c.data.locality});
      torch::Tensor loss;
      {
        AutocastScope autocast(device, bf16);
        loss = model->per_sequence_loss(b.inputs.to(device), b.targets.to(device)).mean() /
               static_cast<double>(c.train.accumulation);
      }
      loss.backward();
      local_loss += loss.detach().to(torch::kDouble);
    }
    const bool matrix_step = sketching && c.diagnostics.matrix_every > 0 && (step + 1) % c.diagnostics.matrix_every == 0;
    const bool sketch_now = sketching && (c.diagnostics.pairwise == "sketch" || matrix_step);
    const torch::Tensor local_sketch = sketch_now ? (*sketch)(parameters) : torch::Tensor();  // before the all-reduce
    const GradientSyncResult sync = synchronize_gradients(parameters, *collective, sync_options);
    clip_gradients(parameters, sync.mean_l2, c.optim.clip);
    const StepScalars scalars = gather_step_scalars(*collective, local_loss, sync, local_sketch);
    const auto& rank_loss = scalars.ranks.loss;
    const double step_loss = std::accumulate(rank_loss.begin(), rank_loss.end(), 0.0) / static_cast<double>(world);

    const bool finite = std::isfinite(step_loss);
    if (!finite && c.train.nonfinite == "stop") {
      if (log) log->flush();
      throw std::runtime_error("non-finite training loss " + std::to_string(step_loss) + " at step " +
                               std::to_string(step) + "; last good checkpoint: " +
                               (last_checkpoint.empty() ? std::string("none") : last_checkpoint) +
                               " (train.nonfinite=skip skips such updates)");
    }
    const double lr = schedule(step);
    set_learning_rate(*optimizer, lr);
    if (finite) {
      optimizer->step();
    } else {
      progress << "step " << step << ": non-finite loss, update skipped" << std::endl;
    }
    if (log) {
      std::optional<diagnostics::StepDispersion> dispersion;
      if (c.diagnostics.enabled) {
        dispersion = diagnostics::step_dispersion(scalars.ranks);
        if (!scalars.sketches.empty()) {
          const auto matrix = diagnostics::sketch_cosine_matrix(scalars.sketches, c.diagnostics.sketch_dim, scalars.ranks.grad_norm);
          if (c.diagnostics.pairwise == "sketch") dispersion->cos_pairwise = diagnostics::mean_off_diagonal(matrix, world);
          if (matrix_step) log->record_cos_matrix(step + 1, matrix);
        }
      }
      log->record({step, lr, step_loss, scalars.ranks.mean_grad_norm, scalars.grad_norm_l1,
                   tokens_per_step * static_cast<double>(step + 1),
                   std::chrono::duration<double>(Clock::now() - start).count(), rank_loss, scalars.ranks.grad_norm,
                   dispersion ? &*dispersion : nullptr});
    }

    summary.losses.push_back(step_loss);
    window_loss += step_loss;
    ++window_steps;
    const bool last = step + 1 == c.train.steps;
    if (lead && (last || (c.checkpoint.every > 0 && (step + 1) % c.checkpoint.every == 0))) {
      log->record_checkpoint(step + 1);
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
    if (lead && (last || (c.eval.every > 0 && (step + 1) % c.eval.every == 0))) {
      for (const auto& set : eval_sets) {
        const double eval_loss = evaluate(model, set.tokens, c, device);
        log->record_eval(set.name, step + 1, eval_loss);
        summary.final_eval_losses[set.name] = eval_loss;
        if (!last) progress << "eval   step " << step + 1 << "  " << set.name << " loss " << eval_loss << std::endl;
      }
    }
  }
  summary.steps = c.train.steps;
  summary.checkpoint = last_checkpoint;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.tokens_per_second = tokens_per_step * static_cast<double>(c.train.steps - start_step) / summary.seconds;
  if (lead) {
    summary.final_eval_loss = summary.final_eval_losses.begin()->second;
    if (summary.final_eval_losses.count("heldout")) summary.final_eval_loss = summary.final_eval_losses["heldout"];
    log->flush();
    summary.log_path = log->path();
  }
  return summary;
}

}  // namespace lrkit::train
