#include "trainer.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/distributed/device_identity.hpp"
#include "lrkit/schedules/summary.hpp"
#include "lrkit/train/memory_need.hpp"
#include "lrkit/train/model_flops.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/stop_signals.hpp"
#include "lrkit/train/worker_census.hpp"
#include "cuda_device.hpp"
#include "restore.hpp"
#include "settings_checks.hpp"

namespace lrkit::train {

namespace {

constexpr uint64_t kSketchStream = 4;

const TrainConfig& validated(const TrainConfig& c) {
  c.validate();
  return c;
}

// Checks what needs the world and places the worker (its share of the cores: Trainer::threads_).
WorkerPlacement prepare_worker(const TrainConfig& c, const distributed::DistributedEnv& env) {
  const WorkerPlacement placement = place_worker(c, env.local_rank, env.local_world_size, gpu_view(env));
  c.validate_world(env.world_size);
  if (placement.device.is_cuda()) use_cuda_device(placement.device, c.train.tf32);
  return placement;
}

// Where every worker trains (its machine and device) and that device's peak FLOP/s, the MFU denominator:
// train.peak_tflops per device (on the CPU, per machine), else the GPU's known bf16 peak (0: unknown).
WorkerCensus worker_census(const TrainConfig& c, distributed::Collective& collective, const torch::Device& device) {
  const double peak = c.train.peak_tflops > 0 ? c.train.peak_tflops * 1e12 : known_peak_flops(device_name(device));
  return take_worker_census(collective, distributed::host_name(), distributed::device_identity(device), peak);
}

// Where the launcher did not say how many workers share this machine's cores (RANK and WORLD_SIZE alone, as
// Kubeflow's PyTorchJob sets them: WORLD_SIZE is no machine's count), the census counts those on a machine of this
// name; a count the launcher told stands.
distributed::DistributedEnv with_machine_workers(distributed::DistributedEnv env, const WorkerCensus& census, int rank) {
  if (!env.local_world_size_known) {
    env.local_world_size = census.workers_on_machine_of(rank);
    env.local_world_size_known = true;
  }
  return env;
}

std::unique_ptr<distributed::Collective> make_collective(const TrainConfig& c, const schedules::Schedule& schedule,
                                                         const distributed::DistributedEnv& env, const WorkerPlacement& placement) {
  if (env.world_size == 1) return distributed::make_single_process_collective(placement.device);
  auto collective =
      distributed::make_c10d_collective(env, placement.backend, placement.device, std::chrono::seconds(c.dist.timeout_s));
  require_one_config(c, schedule, *collective);  // the group's first collective: settings could set the later ones apart
  return collective;
}

// A save that a kill cut short leaves its temporary file, as large as a checkpoint and never read (the checkpoint it
// was to be is not listed): removed when the run starts again, and said. Each worker removes what it sees, so that
// machines with directories of their own are cleared too.
void remove_killed_saves(const std::string& run_dir, std::ostream& progress) {
  const std::vector<PartialCheckpoint> removed = remove_partial_checkpoints(run_dir);
  if (removed.empty()) return;
  double bytes = 0;
  std::vector<std::string> paths;
  for (const PartialCheckpoint& file : removed) {
    bytes += static_cast<double>(file.bytes);
    paths.push_back(file.path);
  }
  progress << "removed " << removed.size() << " partial checkpoint file(s) of a save a kill cut short ("
           << bytes_text(bytes) << "): " << list_for_message(paths, 4) << std::endl;
}

}  // namespace

Trainer::Trainer(const TrainConfig& config, std::ostream& progress, const std::function<void()>& starting)
    : c_(validated(config)),
      schedule_(c_.learning_rate_schedule()),
      env_(distributed::distributed_env_from_environment()),
      placement_(prepare_worker(c_, env_)),
      device_(placement_.device),
      collective_(make_collective(c_, schedule_, env_, placement_)),
      census_(worker_census(c_, *collective_, device_)),
      threads_(share_cores(c_.train.threads, with_machine_workers(env_, census_, collective_->rank()))),  // or they thrash
      solo_(distributed::make_single_process_collective(device_)),
      world_(collective_->world_size()),
      lead_(collective_->rank() == 0),
      plan_(c_, world_),
      data_(c_),
      eval_sets_(lead_ ? load_eval_sets(c_, data_) : std::vector<NamedTokens>()),
      replicas_(make_replicas(c_, collective_->rank(), world_, device_)),  // after the group exists
      replica_parameters_(parameter_lists(replicas_)),
      hdet_(make_hdet_ensemble(c_, *collective_)),
      spread_(spread_of(c_)),
      loss_spikes_(c_.train.skip_loss_z, c_.train.spike_window, "train.skip_loss_z", "train.spike_window"),
      grad_norm_spikes_(c_.train.skip_grad_z, c_.train.spike_window, "train.skip_grad_z", "train.spike_window") {
  if (starting) starting();  // every worker got this far: the group and its first checks agree
  progress_ = lead_ ? &progress : &null_stream_;
  if (!plan_.identical_replicas) {
    mean_model_.emplace(c_.model);
    (*mean_model_)->to(device_);
  }
  std::ostringstream restored_lines;  // "resumed from ...", said once every worker starts there
  const Restored restored = restore(c_, replicas_, hdet_ ? &*hdet_ : nullptr, restored_lines);
  require_one_start(restored.start, *collective_);  // before any worker trains on its own start
  *progress_ << restored_lines.str() << std::flush;
  remove_killed_saves(c_.out, *progress_);  // every worker has started here, and none saves before a step
  start_step_ = restored.start.step;
  tokens_per_step_ = static_cast<double>(c_.train.batch * c_.model.context);
  session_ = restored.start;
  skipped_in_a_row_ = restored.loop.skipped_in_a_row;  // so a resumed run stops where the uninterrupted one would
  loss_spikes_.restore(restored.loop.loss_spikes);      // and skips the updates it would
  grad_norm_spikes_.restore(restored.loop.grad_norm_spikes);
  if ((session_.kind == "resume" || session_.kind == "branch") && skipped_in_a_row_ == 0) last_good_checkpoint_ = session_.checkpoint;
  session_.device = device_name(device_);
  session_.flops_per_token = flops_per_token(c_.model, parameter_count(c_.model));
  session_.peak_flops = census_.job_peak_flops();
  session_.threads = describe(threads_);
  log_ = lead_ ? open_run_log(c_, world_, session_, restored.continues_log) : std::make_unique<RunLog>();
  if (const std::string changed = log_->changed_settings(); !changed.empty())
    *progress_ << "changed since the session before: " << changed << std::endl;
  if (lead_) *progress_ << "run log: " << log_->path() << std::endl;
  sync_options_ = {c_.dist.bucket_mb, plan_.diagnostics, plan_.exact_pairwise};
  if (plan_.sketching)
    sketch_.emplace(replicas_.front().parameters, c_.diagnostics.sketch_dim, derive_seed(c_.train.seed, kSketchStream));
  micro_rows_ = c_.train.batch / (world_ * c_.replicas_per_rank()) / c_.train.accumulation;
  profiler_.emplace(c_.train.profile_from - 1, c_.train.profile_steps, device_, profile_trace_path(c_.out, collective_->rank()),
                    session_.device);
}

TrainSummary Trainer::run() {
  const double mfu_of_one_second =
      session_.peak_flops > 0 ? session_.flops_per_token * tokens_per_step_ / session_.peak_flops : 0.0;
  meter_.emplace(start_step_, c_.train.steps, tokens_per_step_, mfu_of_one_second);
  *progress_ << "training on " << data_.describe() << " with " << world_ << " worker(s)";
  if (hdet_) *progress_ << ", HDET " << hdet_->replicas() << " replicas (" << c_.hdet.mode.text() << ")";
  *progress_ << ": steps " << start_step_ << ".." << c_.train.steps << ", schedule " << c_.schedule << std::endl;
  // What MFU is made of, in one line that tools (bench/gpu_vs_pytorch.sh) read too.
  *progress_ << "model: " << session_.flops_per_token << " FLOPs per token (6P + 12LWT); device " << session_.device
             << ", peak " << session_.peak_flops / 1e12 << " TFLOP/s" << (session_.peak_flops > 0 ? "" : " (unknown: no MFU)")
             << std::endl;
  *progress_ << "memory: " << describe(worker_memory_lower_bound(c_, world_)) << std::endl;
  *progress_ << "threads per worker: " << session_.threads << std::endl;
  if (const std::string warning = schedules::peak_warning(schedules::summarize(schedule_, c_.train.steps)); !warning.empty())
    *progress_ << "warning: " << warning << std::endl;
  const StopSignals stop_signals;  // from here on a stop signal ends the run after its step, checkpointed
  for (int64_t step = start_step_; step < c_.train.steps; ++step) this->step(step);

  summary_.steps = c_.train.steps;
  summary_.checkpoint = last_checkpoint_;
  summary_.seconds = meter_->seconds();
  summary_.tokens_per_second = meter_->tokens_per_second(c_.train.steps - start_step_);
  if (hdet_) summary_.final_lr_scale = hdet_->state(0).scale;
  if (lead_) {
    summary_.final_eval_loss = summary_.final_eval_losses.begin()->second;
    if (summary_.final_eval_losses.count("heldout")) summary_.final_eval_loss = summary_.final_eval_losses["heldout"];
    log_->flush();
    summary_.log_path = log_->path();
    throw_if_the_last_update_broke_the_model();
  }
  return summary_;
}

// The training loss of the last step is finite when its update is what breaks the weights: only the final evaluation
// sees the result, and a run that ends with a non-finite held-out loss diverged (exit 3; a sweep ranks it last).
void Trainer::throw_if_the_last_update_broke_the_model() const {
  for (const auto& [set, loss] : summary_.final_eval_losses)
    if (!std::isfinite(loss))
      throw DivergedError("non-finite " + set + " loss " + format_number(loss) + " at the evaluation after the last step (" +
                          std::to_string(c_.train.steps) + ", logged): the last updates broke the model" +
                          (last_checkpoint_.empty() ? "" : "; checkpoint " + last_checkpoint_ + " holds those weights"));
}

void Trainer::step(int64_t step) {
  profiler_->before_step(step);
  run_step(step);
  if (const auto trace = profiler_->after_step(step))
    *progress_ << "profile: " << trace->host_events << " host and " << trace->device_events << " device events of updates "
               << trace->first_step << ".." << trace->last_step << " in " << trace->path << std::endl;
}

// The step's phases carry `lrkit.*` annotations (RECORD_USER_SCOPE) that a profiler trace shows; free otherwise.
void Trainer::run_step(int64_t step) {
  RECORD_USER_SCOPE("lrkit.step");
  const Hyperparameters hyper = set_hyperparameters(step);
  const Losses losses = forward_backward(step);
  const Gradients gradients = synchronize(step);
  StepScalars scalars = gather_step_scalars(*collective_, losses.replicas, gradients.sync, gradients.sketch, StopSignals::requested());
  if (plan_.local_mode) use_rms_gradient_norm(scalars);
  if (diverged(scalars.loss)) stop_diverged(step, hyper, scalars, losses);
  const UpdateCheck check = check_update(scalars);
  optimizer_step(step, check);
  record(step, hyper, scalars, losses, check);
  hdet_after_step(step, hyper, scalars);
  log_->end_step();
  summary_.losses.push_back(scalars.loss);
  if (meter_->add(step, scalars.loss, hyper.lr, plan_.progress_due(step), hdet_ ? hdet_->state(0).scale : 0.0, *progress_))
    summary_.final_loss = meter_->last_window_loss();
  evaluate_and_checkpoint(step);
  if (scalars.stop_signal != 0 && !plan_.last(step)) stop_on_signal(step, scalars.stop_signal);
}

}  // namespace lrkit::train
