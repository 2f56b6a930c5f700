#include "lrkit/train/trainer.hpp"

#include <algorithm>
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
#include "lrkit/train/data_mixture.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/collective.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/hdet_ensemble.hpp"
#include "lrkit/train/gradient_sync.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "lrkit/train/run_log.hpp"
#include "autocast_scope.hpp"
#include "replicas.hpp"
#include "sample_reweighting.hpp"

namespace lrkit::train {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kHistogramMaxRelative = 4.0;  // the weight histogram spans N w in [0, 4] (1: uniform)

struct Restored {
  int64_t step = 0;
  bool continues_log = false;  // resumed in place: the run log keeps its rows before `step`
};

// Applies --resume / --branch-from / --init-from to every replica (and HDET's state).
Restored restore(const TrainConfig& c, std::vector<Replica>& replicas, HdetEnsemble* hdet, std::ostream& progress) {
  if (!c.init_from.empty()) {
    for (auto& r : replicas) load_checkpoint(c.init_from, r.model, nullptr);
    progress << "initialized weights from " << c.init_from << std::endl;
    return {};
  }
  std::optional<std::string> path;
  if (!c.resume.empty()) {
    path = c.resume == "auto" ? latest_checkpoint(c.out) : std::optional<std::string>(c.resume);
    if (!path && c.branch_from.empty()) progress << "resume: no checkpoint in " << c.out << ", starting from step 0" << std::endl;
  }
  const bool branching = !path && !c.branch_from.empty();
  if (branching) path = c.branch_from;
  if (!path) return {};
  const CheckpointInfo info = read_checkpoint_info(*path);
  // A branch changes the schedule on purpose; a resumed run must not.
  if (!branching && info.schedule_spec != c.schedule)
    throw std::invalid_argument("checkpoint '" + *path + "' was trained with schedule '" + info.schedule_spec +
                                "' but the config says '" + c.schedule + "'");
  if (info.step >= c.train.steps)
    throw std::invalid_argument("checkpoint '" + *path + "' is at step " + std::to_string(info.step) +
                                ", not before train.steps = " + std::to_string(c.train.steps));
  if (hdet) {
    if (info.hdet.empty())
      throw std::invalid_argument("checkpoint '" + *path + "' holds no HDET state but hdet.enabled = true (use --init-from)");
    hdet->restore(info.hdet);
  } else if (!info.hdet.empty()) {
    throw std::invalid_argument("checkpoint '" + *path + "' is from an HDET run but hdet.enabled = false (use --init-from)");
  }
  // Plain data parallel: every rank's weights and optimizer state equal rank 0's. HDET: each replica has its file.
  for (auto& r : replicas)
    load_checkpoint(r.index == 0 || !hdet ? *path : replica_checkpoint_path(*path, r.index), r.model, r.optimizer.get());
  progress << (branching ? "branched from " : "resumed from ") << *path << " at step " << info.step << std::endl;
  return {info.step, !branching};
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

// The evaluation sets: held-out tails of the training sources (loaded already) and of other files.
std::vector<NamedTokens> load_eval_sets(const TrainConfig& c, const DataMixture& data) {
  std::vector<NamedTokens> sets;
  for (const auto& set : c.eval_sets()) {
    const ByteCorpus* loaded = set.path.empty() ? &data.corpus(0) : nullptr;
    for (size_t i = 0; i < data.size() && !loaded; ++i)
      if (data.corpus(i).path() == set.path) loaded = &data.corpus(i);
    sets.push_back({set.name, loaded ? loaded->heldout() : ByteCorpus::load(set.path, c.data.heldout, c.model.context).heldout()});
  }
  return sets;
}

// What one optimizer step measured, read back to the host in one transfer.
struct StepScalars {
  diagnostics::RankScalars ranks;  // a rank's loss is the mean of its replicas' losses
  std::vector<double> replica_loss;  // every replica's local loss, global replica order
  double grad_norm_l1 = 0.0;
  std::vector<double> sketches;  // [world, sketch dim] row-major, when sketched this step
};

// Every rank's (||g_k||^2, g_k . g_bar, replica losses[, sketch]) by one
// all-gather, and the global norms, in one device-to-host copy.
StepScalars gather_step_scalars(Collective& collective, const torch::Tensor& replica_losses, const GradientSyncResult& sync,
                                const torch::Tensor& sketch) {
  const auto device = replica_losses.device();
  const auto nan = torch::full({1}, std::numeric_limits<double>::quiet_NaN(), torch::TensorOptions().dtype(torch::kDouble).device(device));
  const auto defined_or_nan = [&](const torch::Tensor& t) { return t.defined() ? t.reshape({1}) : nan; };
  const int64_t replicas = replica_losses.numel();
  std::vector<torch::Tensor> mine = {sync.local_sq.reshape({1}), defined_or_nan(sync.dot_with_mean), replica_losses};
  if (sketch.defined()) mine.push_back(sketch);
  const auto gathered = collective.all_gather(torch::cat(mine));  // [world, 2 + replicas (+ sketch dim)]
  const auto host = torch::cat({gathered.reshape({-1}), defined_or_nan(sync.mean_l2), defined_or_nan(sync.mean_l1),
                                defined_or_nan(sync.normalized_sum_sq)})
                        .to(torch::kCPU);
  const double* v = host.data_ptr<double>();
  const int64_t world = gathered.size(0), width = gathered.size(1);
  StepScalars out;
  for (int64_t r = 0; r < world; ++r) {
    const double* row = v + r * width;
    out.ranks.grad_norm.push_back(std::sqrt(row[0]));
    if (sync.dot_with_mean.defined()) out.ranks.dot_with_mean.push_back(row[1]);
    double rank_loss = 0.0;
    for (int64_t k = 0; k < replicas; ++k) rank_loss += row[2 + k];
    out.ranks.loss.push_back(rank_loss / static_cast<double>(replicas));
    out.replica_loss.insert(out.replica_loss.end(), row + 2, row + 2 + replicas);
    out.sketches.insert(out.sketches.end(), row + 2 + replicas, row + width);
  }
  out.ranks.mean_grad_norm = v[world * width];
  out.grad_norm_l1 = v[world * width + 1];
  out.ranks.normalized_sum_sq = v[world * width + 2];
  return out;
}

// hdet.mode=local: every replica steps on its own gradient, clipped by its
// own norm; no all-reduce. The rank reports the mean squared norm of its
// replicas (so the logged norm is their RMS); no mean gradient exists.
GradientSyncResult local_gradients(std::vector<Replica>& replicas, Collective& solo, double clip) {
  const GradientSyncOptions measure_only{1.0, false, false};
  std::vector<torch::Tensor> squares;
  for (auto& r : replicas) {
    const auto own = synchronize_gradients(r.parameters, solo, measure_only);
    clip_gradients(r.parameters, own.mean_l2, clip);
    squares.push_back(own.local_sq);
  }
  GradientSyncResult result;
  result.local_sq = torch::stack(squares).mean();
  return result;
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
  const int64_t per_rank = c.replicas_per_rank();
  if (c.train.batch % (env.world_size * per_rank * c.train.accumulation) != 0)
    throw std::invalid_argument("train.batch (" + std::to_string(c.train.batch) + ") must be a multiple of workers (" +
                                std::to_string(env.world_size) + ") x replicas per worker (" + std::to_string(per_rank) +
                                ") x train.accumulation (" + std::to_string(c.train.accumulation) + ")");
  c.desynced_ranks(env.world_size * per_rank);  // names a rank beyond the world before anything starts
  // Each local worker gets its share of the cores, or they thrash.
  const auto cores = static_cast<int64_t>(std::max(1u, std::thread::hardware_concurrency()));
  torch::set_num_threads(static_cast<int>(c.train.threads > 0 ? c.train.threads : std::max<int64_t>(1, cores / env.local_world_size)));
  const auto collective = env.world_size > 1
                              ? make_c10d_collective(env, device, std::chrono::seconds(c.dist.timeout_s))
                              : make_single_process_collective();
  const int world = collective->world_size();
  const bool lead = collective->rank() == 0;
  std::ostream null_stream(nullptr);
  std::ostream& progress = lead ? progress_out : null_stream;
  const bool bf16 = c.train.precision == "bf16";
  const bool local_mode = c.hdet.enabled && c.hdet.mode == "local";
  const bool identical_replicas = c.hdet_replicas_identical();

  const DataMixture data(c);
  const auto eval_sets = lead ? load_eval_sets(c, data) : std::vector<NamedTokens>();
  auto replicas = make_replicas(c, collective->rank(), world, device);  // after the group exists
  const auto replica_parameters = parameter_lists(replicas);
  const auto& lead_parameters = replicas.front().parameters;  // the rank's gradient is gathered here
  auto hdet = make_hdet_ensemble(c, *collective);
  // Evaluation sees the replicas' mean (what a sync would produce) when they differ.
  std::optional<Gpt> mean_model;
  if (!identical_replicas) {
    mean_model.emplace(c.model);
    (*mean_model)->to(device);
  }
  const Restored restored = restore(c, replicas, hdet ? &*hdet : nullptr, progress);
  const int64_t start_step = restored.step;
  const auto milestones = c.checkpoint_steps();  // checkpointed, kept and evaluated
  const auto is_milestone = [&](int64_t step) { return std::binary_search(milestones.begin(), milestones.end(), step); };
  std::optional<RunLog> log;  // written by rank 0 only
  if (lead) {
    log.emplace(c, world, restored.continues_log ? start_step : 0);
    progress << "run log: " << log->path() << std::endl;
  }
  const GradientSyncOptions sync_options{c.dist.bucket_mb, c.diagnostics.enabled,
                                         c.diagnostics.enabled && c.diagnostics.pairwise == "exact" && world > 1};
  const bool sketching = c.diagnostics.enabled && world > 1 && !local_mode &&
                         (c.diagnostics.pairwise == "sketch" || c.diagnostics.matrix_every > 0);
  std::optional<GradientSketch> sketch;  // the same projection on every rank
  if (sketching) sketch.emplace(lead_parameters, c.diagnostics.sketch_dim, derive_seed(c.train.seed, 4));
  const auto solo = make_single_process_collective();  // local mode: each replica's own gradient

  const int64_t micro_rows = c.train.batch / (world * per_rank) / c.train.accumulation;
  const double tokens_per_step = static_cast<double>(c.train.batch * c.model.context);
  const auto loss_options = torch::TensorOptions().dtype(torch::kDouble).device(device);
  TrainSummary summary;
  const auto start = Clock::now();
  auto window_start = start;
  double window_loss = 0.0;
  int64_t window_steps = 0;

  progress << "training on " << data.describe() << " with " << world << " worker(s)";
  if (hdet) progress << ", HDET " << hdet->replicas() << " replicas (" << c.hdet.mode << ")";
  progress << ": steps " << start_step << ".." << c.train.steps << ", schedule " << c.schedule << std::endl;
  std::string last_checkpoint;
  for (int64_t step = start_step; step < c.train.steps; ++step) {
    const double scheduled_lr = schedule(step);
    const double lr = hdet ? hdet->base(0, scheduled_lr) : scheduled_lr;  // the replicas' mean rate
    const auto scheduled = hdet ? scheduled_values(c, scheduled_lr) : std::vector<double>{scheduled_lr};
    const auto spread_values = apply_hyperparameters(hdet ? &*hdet : nullptr, replicas, scheduled);
    const auto sampling = data.sampling(step);
    std::vector<torch::Tensor> replica_loss;
    std::optional<BatchWeights> batch_weights;  // reweighting on (never with HDET: one replica)
    for (auto& replica : replicas) {
      // Dropout masks are a function of (replica stream, step): a resumed run draws the same ones.
      torch::manual_seed(derive_seed(replica.streams.dropout_seed, static_cast<uint64_t>(step)));
      replica.optimizer->zero_grad();
      // [micro_rows] per-sample mean token losses, and the upweighting factors p/q of their sources (or 1).
      auto micro_losses = [&](int64_t micro) -> std::pair<torch::Tensor, torch::Tensor> {
        const MixedBatch m = data.sample(replica.streams.first_row + micro * micro_rows, micro_rows, c.model.context,
                                         {replica.streams.data_seed, step, c.data.locality}, sampling);
        AutocastScope autocast(device, bf16);
        auto losses = replica.model->per_sequence_loss(m.batch.inputs.to(device), m.batch.targets.to(device));
        if (!data.upweighting()) return {losses, torch::Tensor()};
        const auto w = data.row_weights(m.source, step);
        return {losses, torch::tensor(w, torch::kDouble).to(device)};
      };
      if (c.reweight.enabled()) {
        // The weights need the whole global batch's losses: every micro-batch's graph is kept until then.
        std::vector<torch::Tensor> parts;
        for (int64_t micro = 0; micro < c.train.accumulation; ++micro) parts.push_back(micro_losses(micro).first);
        const auto losses = torch::cat(parts);
        batch_weights = weigh_global_batch(*collective, losses.detach(), c.reweight, step);
        (losses * batch_weights->local).sum().backward();
        replica_loss.push_back(losses.detach().to(torch::kDouble).mean().reshape({1}));
        continue;
      }
      torch::Tensor loss_sum = torch::zeros({}, loss_options);
      for (int64_t micro = 0; micro < c.train.accumulation; ++micro) {
        const auto [losses, upweights] = micro_losses(micro);
        const auto loss = losses.mean() / static_cast<double>(c.train.accumulation);
        // Upweighting: the gradient of sum_j (p_s/q_s) l_j / B; the log keeps the plain mean loss.
        (upweights.defined() ? (losses.to(torch::kDouble) * upweights).mean() / static_cast<double>(c.train.accumulation) : loss)
            .backward();
        loss_sum += loss.detach().to(torch::kDouble);
      }
      replica_loss.push_back(loss_sum.reshape({1}));
    }
    const bool matrix_step = sketching && c.diagnostics.matrix_every > 0 && (step + 1) % c.diagnostics.matrix_every == 0;
    const bool sketch_now = sketching && (c.diagnostics.pairwise == "sketch" || matrix_step);
    GradientSyncResult sync;
    torch::Tensor local_sketch;
    if (local_mode) {
      sync = local_gradients(replicas, *solo, c.optim.clip);
    } else {
      mean_gradient_into_first(replica_parameters);  // the rank's gradient: its replicas' mean
      if (sketch_now) local_sketch = (*sketch)(lead_parameters);  // before the all-reduce
      sync = synchronize_gradients(lead_parameters, *collective, sync_options);
      clip_gradients(lead_parameters, sync.mean_l2, c.optim.clip);
      copy_gradient_from_first(replica_parameters);
    }
    StepScalars scalars = gather_step_scalars(*collective, torch::cat(replica_loss), sync, local_sketch);
    const auto& rank_loss = scalars.ranks.loss;
    const double step_loss = std::accumulate(rank_loss.begin(), rank_loss.end(), 0.0) / static_cast<double>(world);
    if (local_mode) {  // no mean gradient: log the replicas' RMS gradient norm
      double sum_sq = 0.0;
      for (double n : scalars.ranks.grad_norm) sum_sq += n * n;
      scalars.ranks.mean_grad_norm = std::sqrt(sum_sq / static_cast<double>(world));
    }

    const bool finite = std::isfinite(step_loss);
    if (!finite && c.train.nonfinite == "stop") {
      if (log) log->flush();
      throw std::runtime_error("non-finite training loss " + std::to_string(step_loss) + " at step " +
                               std::to_string(step) + "; last good checkpoint: " +
                               (last_checkpoint.empty() ? std::string("none") : last_checkpoint) +
                               " (train.nonfinite=skip skips such updates)");
    }
    if (finite) {
      for (auto& replica : replicas) replica.optimizer->step();
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
      if (data.size() > 1) {
        const auto rows = data.rows_per_source(c.train.batch, {replicas.front().streams.data_seed, step, 0}, sampling);
        log->record_data(data.temperature(step), data.target(step), std::vector<double>(rows.begin(), rows.end()));
      }
      if (batch_weights) {
        const bool histogram = c.reweight.histogram_every > 0 && (step + 1) % c.reweight.histogram_every == 0;
        log->record_weights(step + 1, batch_weights->stats,
                            histogram ? reweight::relative_weight_histogram(batch_weights->weights, c.reweight.histogram_bins,
                                                                           kHistogramMaxRelative)
                                      : std::vector<double>());
      }
    }

    const bool last = step + 1 == c.train.steps;
    if (hdet) {
      hdet->observe(scalars.replica_loss);
      HdetRecord record{scalars.replica_loss, hdet->window_mean_loss(), {}};
      const bool sync_now = hdet->sync_due();
      // Converge at every sync, and at the end so the run's result is the replicas' mean.
      if ((sync_now || last) && !identical_replicas) average_replicas(replica_parameters, *collective, c.dist.bucket_mb);
      if (sync_now) hdet->sync(scheduled);
      if (log) {
        for (size_t i = 0; i < hdet->size(); ++i) {
          const auto& state = hdet->state(i);
          record.spread.push_back({hdet->base(i, scheduled[i]), state.scale, state.delta, state.velocity, spread_values[i]});
        }
        log->record_hdet(record);
      }
    }
    if (log) log->end_step();

    summary.losses.push_back(step_loss);
    window_loss += step_loss;
    ++window_steps;
    if ((step + 1) % c.train.log_every == 0 || last) {
      const auto now = Clock::now();
      const double window_seconds = std::chrono::duration<double>(now - window_start).count();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      const double tps = tokens_per_step * static_cast<double>(window_steps) / std::max(window_seconds, 1e-9);
      const double eta = elapsed / static_cast<double>(step + 1 - start_step) * static_cast<double>(c.train.steps - step - 1);
      char line[240];
      std::snprintf(line, sizeof line, "step %6lld/%lld  loss %.4f  %s %.3e  %8.0f tok/s  ETA %s",
                    static_cast<long long>(step + 1), static_cast<long long>(c.train.steps),
                    window_loss / static_cast<double>(window_steps), hdet ? "base lr" : "lr", lr, tps,
                    format_duration(eta).c_str());
      progress << line;
      if (hdet) {
        std::snprintf(line, sizeof line, "  (x%.3f of the schedule)", hdet->state(0).scale);
        progress << line;
      }
      progress << std::endl;
      summary.final_loss = window_loss / static_cast<double>(window_steps);
      window_loss = 0.0;
      window_steps = 0;
      window_start = now;
    }
    // Evaluate before checkpointing: a checkpoint on disk means its step's evaluation is in the log.
    if (last || is_milestone(step + 1) || (c.eval.every > 0 && (step + 1) % c.eval.every == 0)) {
      Gpt& evaluated = mean_model ? *mean_model : replicas.front().model;
      if (mean_model) mean_of_replicas(replica_parameters, (*mean_model)->parameters(), *collective, c.dist.bucket_mb);
      for (const auto& set : eval_sets) {  // rank 0 only
        const double eval_loss = evaluate(evaluated, set.tokens, c, device);
        log->record_eval(set.name, step + 1, eval_loss);
        summary.final_eval_losses[set.name] = eval_loss;
        if (!last) progress << "eval   step " << step + 1 << "  " << set.name << " loss " << eval_loss << std::endl;
      }
    }
    if (last || is_milestone(step + 1) || (c.checkpoint.every > 0 && (step + 1) % c.checkpoint.every == 0)) {
      if (hdet) {  // every replica's file first; rank 0's main file, written last, marks the set complete
        for (auto& replica : replicas)
          if (replica.index != 0)
            save_replica_checkpoint(c.out, step + 1, replica.index, replica.model, *replica.optimizer, c.schedule);
        auto barrier = torch::zeros({1}, loss_options);
        collective->all_reduce_sum(barrier);
      }
      if (lead) {
        log->record_checkpoint(step + 1);
        log->flush();  // the log never lags behind a checkpoint
        last_checkpoint = save_checkpoint(c.out, c.checkpoint.keep, milestones, step + 1, replicas.front().model,
                                          *replicas.front().optimizer, c.schedule,
                                          hdet ? hdet->states() : std::vector<controllers::HdetState>());
      }
    }
  }
  summary.steps = c.train.steps;
  summary.checkpoint = last_checkpoint;
  summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  summary.tokens_per_second = tokens_per_step * static_cast<double>(c.train.steps - start_step) / summary.seconds;
  if (hdet) summary.final_lr_scale = hdet->state(0).scale;
  if (lead) {
    summary.final_eval_loss = summary.final_eval_losses.begin()->second;
    if (summary.final_eval_losses.count("heldout")) summary.final_eval_loss = summary.final_eval_losses["heldout"];
    log->flush();
    summary.log_path = log->path();
  }
  return summary;
}

}  // namespace lrkit::train
