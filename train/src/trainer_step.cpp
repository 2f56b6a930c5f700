// The named parts of Trainer::step(), in the order the step calls them.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "lrkit/distributed/hyperparameters.hpp"
#include "lrkit/train/autocast_scope.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "trainer.hpp"

namespace lrkit::train {

namespace {
constexpr double kHistogramMaxRelative = 4.0;  // the weight histogram spans N w in [0, 4] (1: uniform)
}  // namespace

Trainer::Hyperparameters Trainer::set_hyperparameters(int64_t step) {
  RECORD_USER_SCOPE("lrkit.hyperparameters");
  const double scheduled_lr = schedule_(step);
  Hyperparameters h;
  h.lr = hdet_ ? hdet_->base(0, scheduled_lr) : scheduled_lr;
  h.scheduled = hdet_ ? scheduled_values(c_, spread_, scheduled_lr) : std::vector<double>{scheduled_lr};
  h.spread = apply_hyperparameters(hdet_ ? &*hdet_ : nullptr, spread_, replicas_, h.scheduled);
  if (c_.optim.cycle_momentum) {
    h.momentum = schedule_.cycled_momentum(step, c_.optim.base_momentum, c_.optim.max_momentum);  // validated to cycle
    for (auto& replica : replicas_) distributed::set_momentum(*replica.optimizer, h.momentum.value());
  }
  return h;
}

Trainer::Losses Trainer::forward_backward(int64_t step) {
  RECORD_USER_SCOPE("lrkit.forward_backward");
  Losses out;
  data_.require_whole();  // a data file cut short under the run: named here, not met as SIGBUS
  out.sampling = data_.sampling(step);
  std::vector<torch::Tensor> losses;
  for (auto& replica : replicas_) losses.push_back(replica_loss(replica, step, out.sampling, out.batch_weights));
  out.replicas = torch::cat(losses);
  return out;
}

// One replica's forward and backward over its micro-batches; returns its loss, [1] float64.
torch::Tensor Trainer::replica_loss(Replica& replica, int64_t step, const std::vector<double>& sampling,
                                    std::optional<BatchWeights>& batch_weights) {
  // Dropout masks are a function of (replica stream, step): a resumed run draws the same ones.
  torch::manual_seed(derive_seed(replica.streams.dropout_seed, static_cast<uint64_t>(step)));
  replica.optimizer->zero_grad();
  // [micro_rows] per-sample mean token losses, and the upweighting factors p/q of their sources (or undefined).
  auto micro_losses = [&](int64_t micro) -> std::pair<torch::Tensor, torch::Tensor> {
    const MixedBatch m = data_.sample(replica.streams.first_row + micro * micro_rows_, micro_rows_, c_.model.context,
                                      {replica.streams.data_seed, step, c_.data.locality}, sampling);
    AutocastScope autocast(device_, plan_.bf16);
    auto losses = replica.model->per_sequence_loss(to_device(m.batch.inputs), to_device(m.batch.targets));
    if (!data_.upweighting()) return {losses, torch::Tensor()};
    return {losses, torch::tensor(data_.row_weights(m.source, step), torch::kDouble).to(device_)};
  };
  const auto accumulation = static_cast<double>(c_.train.accumulation);
  if (plan_.reweighting) {
    // The weights need the whole global batch's losses: every micro-batch's graph is kept until then.
    std::vector<torch::Tensor> parts;
    for (int64_t micro = 0; micro < c_.train.accumulation; ++micro) parts.push_back(micro_losses(micro).first);
    const auto losses = torch::cat(parts);
    batch_weights = weigh_global_batch(*collective_, losses.detach(), c_.reweight, step);
    (losses * batch_weights->local).sum().backward();
    return losses.detach().to(torch::kDouble).mean().reshape({1});
  }
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device_));
  for (int64_t micro = 0; micro < c_.train.accumulation; ++micro) {
    const auto [losses, upweights] = micro_losses(micro);
    const auto loss = losses.mean() / accumulation;
    // Upweighting: the gradient of sum_j (p_s/q_s) l_j / B; the log keeps the plain mean loss.
    (upweights.defined() ? (losses.to(torch::kDouble) * upweights).mean() / accumulation : loss).backward();
    loss_sum += loss.detach().to(torch::kDouble);
  }
  return loss_sum.reshape({1});
}

// A batch reaches a GPU from pinned memory without blocking: a pageable copy would wait for the GPU to drain
// first, so the host could not queue the next kernels ahead of it.
torch::Tensor Trainer::to_device(const torch::Tensor& host) const {
  return device_.is_cuda() ? host.pin_memory().to(device_, /*non_blocking=*/true) : host;
}

Trainer::Gradients Trainer::synchronize(int64_t step) {
  RECORD_USER_SCOPE("lrkit.synchronize");
  Gradients g;
  if (plan_.local_mode) {
    g.sync = local_gradients(replicas_, *solo_, c_.optim.clip);
    return g;
  }
  const auto& lead_parameters = replicas_.front().parameters;  // the rank's gradient is gathered here
  distributed::mean_gradient_into_first(replica_parameters_);   // the rank's gradient: its replicas' mean
  if (plan_.sketch_due(step)) g.sketch = (*sketch_)(lead_parameters);  // before the all-reduce
  g.sync = distributed::synchronize_gradients(lead_parameters, *collective_, sync_options_);
  distributed::clip_gradients(lead_parameters, g.sync.mean_l2, c_.optim.clip);
  distributed::copy_gradient_from_first(replica_parameters_);
  return g;
}

// A non-finite loss ends the run under train.nonfinite=stop, and under skip once skip_limit updates in a row were
// skipped: the weights do not move while updates are skipped, so such a run would skip to its end.
bool Trainer::diverged(double loss) {
  skipped_in_a_row_ = std::isfinite(loss) ? 0 : skipped_in_a_row_ + 1;
  // >=: a resumed streak may already be as long as a lowered limit
  return skipped_in_a_row_ > 0 && (plan_.stop_on_nonfinite || (plan_.skip_limit > 0 && skipped_in_a_row_ >= plan_.skip_limit));
}

// After diverged(): a non-finite loss (skipped_in_a_row_ counted it) skips the update; otherwise the loss and the
// gradient norm are scored against their spike windows (train.skip_loss_z, train.skip_grad_z), the same on every
// rank since every rank has the gathered scalars. A non-finite loss is not scored: it stays out of the windows.
Trainer::UpdateCheck Trainer::check_update(const StepScalars& scalars) {
  UpdateCheck check;
  if (skipped_in_a_row_ > 0) {
    check.outcome = UpdateCheck::nonfinite;
    return check;
  }
  const auto loss = loss_spikes_.score(scalars.loss);
  const auto grad_norm = grad_norm_spikes_.score(scalars.ranks.mean_grad_norm);
  check.loss_z = loss.z;
  check.grad_norm_z = grad_norm.z;
  check.outcome = loss.spike ? UpdateCheck::loss_spike : grad_norm.spike ? UpdateCheck::grad_norm_spike : UpdateCheck::applied;
  return check;
}

void Trainer::optimizer_step(int64_t step, const UpdateCheck& check) {
  RECORD_USER_SCOPE("lrkit.optimizer");
  switch (check.outcome) {
    case UpdateCheck::applied:
      for (auto& replica : replicas_) replica.optimizer->step();
      return;
    case UpdateCheck::nonfinite:
      *progress_ << "step " << step << ": non-finite loss, update skipped" << std::endl;
      return;
    case UpdateCheck::loss_spike:
    case UpdateCheck::grad_norm_spike: {
      const bool loss = check.outcome == UpdateCheck::loss_spike;
      const double z = loss ? check.loss_z : check.grad_norm_z;
      char score[32];
      std::snprintf(score, sizeof score, "z %.1f", z);
      *progress_ << "step " << step << ": " << (loss ? "loss" : "gradient-norm") << " spike ("
                 << (std::isfinite(z) ? std::string(score) : std::string("non-finite gradient norm")) << " > "
                 << format_number(loss ? c_.train.skip_loss_z : c_.train.skip_grad_z) << " over the last "
                 << c_.train.spike_window << " updates), update skipped" << std::endl;
      return;
    }
  }
}

namespace {

// Which of HDET's replicas had non-finite losses at the diverged step, and at which rates: the spread sends the
// highest rates over first, which the mean loss alone does not tell. "" without HDET or without such a replica.
std::string nonfinite_replicas(const std::vector<double>& losses, const std::vector<double>& rates, double base) {
  std::vector<size_t> diverged;
  for (size_t r = 0; r < losses.size(); ++r)
    if (!std::isfinite(losses[r])) diverged.push_back(r);
  if (diverged.empty()) return "";
  if (diverged.size() == losses.size()) return "; every HDET replica's loss was non-finite";
  std::string which, at;
  for (size_t r : diverged) {
    which += (which.empty() ? "" : ", ") + std::to_string(r);
    if (r < rates.size()) at += (at.empty() ? "" : ", ") + format_number(rates[r]);
  }
  return "; HDET replica(s) " + which + " of " + std::to_string(losses.size()) + " had non-finite losses, at learning rate(s) " +
         at + " against the base " + format_number(base) + ": a spread that wide diverges there (lower hdet.alpha or the peak)";
}

}  // namespace

// The diverged step is logged before the run stops: its per-rank losses and gradient norms show
// which workers went first, which the mean loss alone does not.
void Trainer::stop_diverged(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars, const Losses& losses) {
  record(step, hyper, scalars, losses, {UpdateCheck::nonfinite});
  if (hdet_) {
    hdet_->observe(scalars.replica_loss);  // so the row reads as every other step's; nothing runs after it
    log_->record_hdet(hdet_record(hdet_->window_mean_loss(), hyper, scalars));
  }
  log_->end_step();
  log_->flush();
  const std::string checkpoint =
      (hdet_ ? nonfinite_replicas(scalars.replica_loss, hyper.spread.empty() ? std::vector<double>() : hyper.spread.front(), hyper.lr)
             : "") +
      "; last good checkpoint: " + last_good_checkpoint_or_none();
  if (plan_.stop_on_nonfinite)
    throw DivergedError("non-finite training loss " + format_number(scalars.loss) + " at step " + std::to_string(step) + " (logged)" +
                        checkpoint + " (train.nonfinite=skip skips such updates)");
  throw DivergedError("non-finite training loss in " + std::to_string(skipped_in_a_row_) + " steps in a row (steps " +
                      std::to_string(step + 1 - skipped_in_a_row_) + ".." + std::to_string(step) + ", logged; updates skipped)" +
                      checkpoint + " (train.skip_limit=0 never stops)");
}

std::string Trainer::last_good_checkpoint_or_none() const {
  return last_good_checkpoint_.empty() ? std::string("none") : last_good_checkpoint_;
}

void Trainer::record(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars, const Losses& losses,
                     const UpdateCheck& check) {
  RECORD_USER_SCOPE("lrkit.record");
  std::optional<diagnostics::StepDispersion> dispersion;
  if (plan_.diagnostics) {
    dispersion = diagnostics::step_dispersion(scalars.ranks);
    if (!scalars.sketches.empty()) {
      const auto matrix = diagnostics::sketch_cosine_matrix(scalars.sketches, c_.diagnostics.sketch_dim, scalars.ranks.grad_norm);
      if (plan_.sketch_pairwise) dispersion->cos_pairwise = diagnostics::mean_off_diagonal(matrix, world_);
      if (plan_.matrix_due(step)) log_->record_cos_matrix(step + 1, matrix);
    }
  }
  log_->record({step, hyper.lr, scalars.loss, scalars.ranks.mean_grad_norm, scalars.grad_norm_l1,
                tokens_per_step_ * static_cast<double>(step + 1), meter_->seconds(), meter_->step_mfu(), check.loss_z,
                check.grad_norm_z, static_cast<double>(check.outcome), scalars.ranks.loss, scalars.ranks.grad_norm,
                dispersion ? &*dispersion : nullptr});
  if (hyper.momentum) log_->record_momentum(*hyper.momentum);
  if (plan_.several_sources) {
    const auto rows = data_.rows_per_source(c_.train.batch, {replicas_.front().streams.data_seed, step, 0}, losses.sampling);
    log_->record_data(data_.temperature(step), data_.target(step), std::vector<double>(rows.begin(), rows.end()));
  }
  if (losses.batch_weights) {
    const auto& w = *losses.batch_weights;
    log_->record_weights(step + 1, w.stats,
                         plan_.histogram_due(step)
                             ? reweight::relative_weight_histogram(w.weights, c_.reweight.histogram_bins, kHistogramMaxRelative)
                             : std::vector<double>());
  }
}

void Trainer::hdet_after_step(int64_t step, const Hyperparameters& hyper, const StepScalars& scalars) {
  if (!hdet_) return;
  RECORD_USER_SCOPE("lrkit.hdet");
  hdet_->observe(scalars.replica_loss);
  const auto window_loss = hdet_->window_mean_loss();
  const bool sync_now = hdet_->sync_due();
  // Converge at every sync, and at the end so the run's result is the replicas' mean.
  if ((sync_now || plan_.last(step)) && !plan_.identical_replicas)
    distributed::average_replicas(replica_parameters_, *collective_, c_.dist.bucket_mb);
  if (sync_now) hdet_->sync(hyper.scheduled);
  log_->record_hdet(hdet_record(window_loss, hyper, scalars));
}

HdetRecord Trainer::hdet_record(std::vector<double> window_loss, const Hyperparameters& hyper, const StepScalars& scalars) const {
  HdetRecord record{scalars.replica_loss, std::move(window_loss), {}};
  for (size_t i = 0; i < hdet_->size(); ++i) {
    const auto& state = hdet_->state(i);
    record.spread.push_back({hdet_->base(i, hyper.scheduled[i]), state.scale, state.delta, state.velocity, hyper.spread[i]});
  }
  return record;
}

// Evaluate before checkpointing: a checkpoint on disk means its step's evaluation is in the log.
void Trainer::evaluate_and_checkpoint(int64_t step) {
  RECORD_USER_SCOPE("lrkit.evaluate_checkpoint");
  // While updates are being skipped the weights are those that made the loss non-finite: a periodic checkpoint of
  // them would prune a good one. Milestones and the last step are still written (sweeps and branches read them).
  const bool checkpoint =
      plan_.checkpoint_due(step) && (skipped_in_a_row_ == 0 || plan_.milestone(step) || plan_.last(step));
  if (checkpoint) require_unchanged_data(step + 1);  // before rank 0 evaluates alone: the workers meet here together
  if (plan_.eval_due(step)) {
    Gpt& evaluated = mean_model_ ? *mean_model_ : replicas_.front().model;
    if (mean_model_)
      distributed::mean_of_replicas(replica_parameters_, (*mean_model_)->parameters(), *collective_, c_.dist.bucket_mb);
    for (const auto& set : eval_sets_) {  // rank 0 only
      set.corpus.require_whole();
      const double loss = evaluate(evaluated, set.corpus.heldout(), c_, device_);
      log_->record_eval(set.name, step + 1, loss);
      summary_.final_eval_losses[set.name] = loss;
      if (!plan_.last(step)) *progress_ << "eval   step " << step + 1 << "  " << set.name << " loss " << loss << std::endl;
    }
  }
  if (checkpoint) save_checkpoints(step + 1);
  // Rank 0 evaluated or wrote alone: the others would meet it in the next step's collectives, which fail after
  // dist.timeout_s, so they wait for it here. After the last step nothing follows.
  if (world_ > 1 && (plan_.eval_due(step) || checkpoint) && !plan_.last(step))
    collective_->barrier(std::chrono::seconds(c_.dist.rank0_timeout_s),
                         "rank 0 to evaluate and checkpoint step " + std::to_string(step + 1) + " (dist.rank0_timeout_s)");
}

// Every rank saw the same request in the step's gather, so all stop after this step. The checkpoint of the stop
// is written like a periodic one (not while updates are being skipped: those weights made the loss non-finite).
void Trainer::stop_on_signal(int64_t step, int signal) {
  const int64_t steps_done = step + 1;
  const bool weights_good = skipped_in_a_row_ == 0;
  if (weights_good && checkpointed_steps_ != steps_done) {
    require_unchanged_data(steps_done);
    save_checkpoints(steps_done);
  }
  log_->flush();
  if (!lead_) throw StoppedError(signal, "");  // rank 0 speaks for the run
  std::string message = std::string(strsignal(signal)) + ": stopped after " + std::to_string(steps_done) + " steps (logged); ";
  if (weights_good)
    message += "checkpoint: " + last_checkpoint_;
  else
    message += "no checkpoint of it: its updates were skipped (non-finite loss); last good checkpoint: " +
               last_good_checkpoint_or_none();
  throw StoppedError(signal, message + " (--resume auto continues the run)");
}

// A data file rewritten in place under the run changes the mapped pages: the steps since the last checkpoint may have
// read new bytes beside old ones, and a checkpoint would keep what they trained. Every rank checks its own files (rank
// 0 its evaluation sets too) before every checkpoint (and before rank 0 evaluates alone, so that all meet in the gather
// together), and one gather tells them all: the run stops on every rank, the checkpoint unwritten. A sampled check
// (file_contents.hpp) at checkpoints only: per step it would cost a read of 256 KiB per file.
void Trainer::require_unchanged_data(int64_t steps_done) {
  std::optional<std::string> change = data_.change();
  std::string readers = "steps";  // what read the new bytes: the training steps, or rank 0's evaluations alone
  for (const auto& set : eval_sets_) {
    if (change) break;
    if (const auto eval_change = set.corpus.change()) {  // a file of its own: one shared with training changed above
      change = "evaluation set " + set.name + "'s " + *eval_change;
      readers = "evaluations";
    }
  }
  std::vector<std::string> changed_ranks;
  bool rank0_changed = change.has_value();
  if (world_ > 1) {
    const auto rows = distributed::gather_rows(*collective_, {change ? 1 : 0});
    for (size_t r = 0; r < rows.size(); ++r)
      if (rows[r][0] != 0) changed_ranks.push_back(std::to_string(r));
    rank0_changed = rows[0][0] != 0;
  }
  if (!change && changed_ranks.empty()) return;
  log_->flush();
  // Rank 0 says it; another rank only where its own copy changed and rank 0's did not (a machine of its own).
  if (!lead_ && (!change || rank0_changed)) throw DataFileChangedError("");
  // Rank 0 knows the file it wrote last; the others (a machine of their own) its step.
  const std::string since = !last_checkpoint_.empty()      ? last_checkpoint_
                            : checkpointed_steps_ >= 0     ? "the checkpoint of step " + std::to_string(checkpointed_steps_)
                            : !session_.checkpoint.empty() ? session_.checkpoint
                                                           : "the start";
  throw DataFileChangedError(
      (change ? *change : ranks_for_message(changed_ranks) + "'s data file changed while the run read it") +
      ": the " + readers + " after " + since + " may have read the new bytes, so step " + std::to_string(steps_done) +
      " was not checkpointed; put the file back and continue with --resume auto (--branch-from CHECKPOINT "
      "--out NEW_DIR " + (readers == "steps" ? "trains" : "evaluates") + " on the new file)");
}

void Trainer::save_checkpoints(int64_t steps_done) {
  checkpointed_steps_ = steps_done;
  if (hdet_) {  // every replica's file first; rank 0's main file, written last, marks the set complete
    for (auto& replica : replicas_)
      if (replica.index != 0)
        save_replica_checkpoint(c_.out, steps_done, replica.index, replica.model, *replica.optimizer, c_.schedule);
    collective_->barrier(std::chrono::seconds(c_.dist.rank0_timeout_s),
                         "every rank's replica checkpoints of step " + std::to_string(steps_done) + " (dist.rank0_timeout_s)");
  }
  if (!lead_) return;
  log_->flush();  // the log never lags behind a checkpoint
  const SavedCheckpoint saved =
      save_checkpoint(c_.out, c_.checkpoint.keep, plan_.milestones, steps_done, replicas_.front().model,
                      *replicas_.front().optimizer, c_.schedule, c_.train.steps,
                      hdet_ ? hdet_->states() : std::vector<controllers::HdetState>(),
                      {skipped_in_a_row_, loss_spikes_.state(), grad_norm_spikes_.state()});
  last_checkpoint_ = saved.path;
  if (skipped_in_a_row_ == 0) last_good_checkpoint_ = saved.path;
  log_->record_checkpoint(steps_done, saved.crc32);  // only a checkpoint that exists is listed
  log_->flush();
}

TrainSummary run_training(const TrainConfig& config, std::ostream& progress, const std::function<void()>& starting) {
  return Trainer(config, progress, starting).run();
}

}  // namespace lrkit::train
