// Every `lrkit train` configuration key, declared once: name, help, rule and
// the field it binds (its default is the field's initializer). Cross-key rules
// live in TrainConfig::validate(); the model's and the HDET controller's own
// rules in GptConfig::validate() and controllers::HdetConfig::validate().
#include "lrkit/train/train_config.hpp"

#include "lrkit/schedules/usable_rates.hpp"

namespace lrkit::train {

namespace {

using C = TrainConfig;
using Key = ConfigKey<C>;

std::vector<Key> make_schema() {
  return {
      plain_key<C>("model.layers", "transformer blocks", &C::model, &GptConfig::layers),
      plain_key<C>("model.heads", "attention heads", &C::model, &GptConfig::heads),
      plain_key<C>("model.width", "embedding width", &C::model, &GptConfig::width),
      plain_key<C>("model.context", "context length in bytes", &C::model, &GptConfig::context),
      plain_key<C>("model.dropout", "dropout probability", &C::model, &GptConfig::dropout),
      plain_key<C>("model.attention", "auto (fused where LibTorch has it), fused or explicit", &C::model, &GptConfig::attention),
      plain_key<C>("model.fused_norm", "off, on or auto (each residual add + LayerNorm as one CUDA kernel)", &C::model, &GptConfig::fused_norm),
      plain_key<C>("data.path", "text file (bytes are tokens)", &C::data, &DataConfig::path),
      config_key<C>("data.heldout", "held-out fraction (the file's tail)", in_open_range(0.0, 0.5), &C::data, &DataConfig::heldout),
      config_key<C>("data.locality", "bytes: each step's batch from one region (0: anywhere)", at_least<int64_t>(0), &C::data, &DataConfig::locality),
      plain_key<C>("data.sources", "a mixture instead of data.path: NAME=PATH, ... (a PATH with a comma in \"double quotes\")", &C::data, &DataConfig::sources),
      plain_key<C>("data.proportions", "source proportions q (default: their sizes)", &C::data, &DataConfig::proportions),
      plain_key<C>("data.mixing", "natural, temperature or upweight", &C::data, &DataConfig::mixing),
      plain_key<C>("data.temperature", "tau as a schedule spec (p ~ q^(1/tau))", &C::data, &DataConfig::temperature),
      plain_key<C>("optim.name", "adamw or sgd", &C::optim, &OptimConfig::name),
      config_key<C>("optim.weight_decay", "on matrices only", at_least(0.0), &C::optim, &OptimConfig::weight_decay),
      config_key<C>("optim.beta1", "AdamW beta1", in_unit_interval_open_right(), &C::optim, &OptimConfig::beta1),
      config_key<C>("optim.beta2", "AdamW beta2", in_unit_interval_open_right(), &C::optim, &OptimConfig::beta2),
      config_key<C>("optim.eps", "AdamW epsilon", above(0.0), &C::optim, &OptimConfig::eps),
      config_key<C>("optim.momentum", "SGD momentum", in_unit_interval_open_right(), &C::optim, &OptimConfig::momentum),
      config_key<C>("optim.clip", "gradient-norm clip (0: off)", at_least(0.0), &C::optim, &OptimConfig::clip),
      plain_key<C>("optim.cycle_momentum", "cycle beta1 (SGD: momentum) against an onecycle or triangular schedule's rate, "
                   "from max_momentum at its lowest to base_momentum at its peak (PyTorch's OneCycleLR and CyclicLR)",
                   &C::optim, &OptimConfig::cycle_momentum),
      config_key<C>("optim.base_momentum", "cycle_momentum: the momentum at the peak rate", in_unit_interval_open_right(),
                    &C::optim, &OptimConfig::base_momentum),
      config_key<C>("optim.max_momentum", "cycle_momentum: the momentum at the lowest rate", in_unit_interval_open_right(),
                    &C::optim, &OptimConfig::max_momentum),
      config_key<C>("train.steps", "optimizer steps (each step's rate is checked before the run)",
                    in_range<int64_t>(1, schedules::kLongestCheckedRun), &C::train, &LoopConfig::steps),
      config_key<C>("train.batch", "sequences per step", at_least<int64_t>(1), &C::train, &LoopConfig::batch),
      config_key<C>("train.accumulation", "micro-batches per step", at_least<int64_t>(1), &C::train, &LoopConfig::accumulation),
      plain_key<C>("train.seed", "seed of weights and data order", &C::train, &LoopConfig::seed),
      plain_key<C>("train.device", "cpu or cuda", &C::train, &LoopConfig::device),
      config_key<C>("train.log_every", "progress line every N steps", at_least<int64_t>(1), &C::train, &LoopConfig::log_every),
      config_key<C>("train.threads", "intra-op threads, at most the CPUs the worker may run on (0: its share of the cores)", at_least<int64_t>(0), &C::train, &LoopConfig::threads),
      plain_key<C>("train.precision", "fp32 or bf16 (autocast)", &C::train, &LoopConfig::precision),
      plain_key<C>("train.tf32", "CUDA: fp32 matmuls in TF32", &C::train, &LoopConfig::tf32),
      config_key<C>("train.peak_tflops", "device peak for MFU, TFLOP/s (0: the GPU's known bf16 peak)", at_least(0.0), &C::train, &LoopConfig::peak_tflops),
      config_key<C>("train.profile_steps", "updates traced into DIR/profile/ (0: none)", at_least<int64_t>(0), &C::train, &LoopConfig::profile_steps),
      config_key<C>("train.profile_from", "first traced update (1-based)", at_least<int64_t>(1), &C::train, &LoopConfig::profile_from),
      plain_key<C>("train.nonfinite", "on a non-finite loss: stop (exit code 3) or skip the update", &C::train, &LoopConfig::nonfinite),
      config_key<C>("train.skip_limit", "nonfinite=skip: stop (exit code 3) after N updates skipped in a row (0: never)", at_least<int64_t>(0), &C::train, &LoopConfig::skip_limit),
      config_key<C>("train.skip_loss_z", "skip an update whose loss z over the last spike_window updates exceeds this (0: never)", at_least(0.0), &C::train, &LoopConfig::skip_loss_z),
      config_key<C>("train.skip_grad_z", "the same for the gradient norm (0: never)", at_least(0.0), &C::train, &LoopConfig::skip_grad_z),
      config_key<C>("train.spike_window", "updates the spike z-scores are taken over", at_least<int64_t>(2), &C::train, &LoopConfig::spike_window),
      config_key<C>("eval.every", "held-out evaluation every N steps (0: end only)", at_least<int64_t>(0), &C::eval, &EvalConfig::every),
      config_key<C>("eval.batches", "evaluation batches", at_least<int64_t>(1), &C::eval, &EvalConfig::batches),
      plain_key<C>("eval.sets", "named sets: heldout, NAME=PATH, ... (a PATH with a comma in \"double quotes\")", &C::eval, &EvalConfig::sets),
      plain_key<C>("dist.backend", "auto (NCCL on CUDA, else Gloo), nccl or gloo (workers may share a GPU)", &C::dist, &DistConfig::backend),
      plain_key<C>("dist.data_split", "sharded or identical (control)", &C::dist, &DistConfig::data_split),
      plain_key<C>("dist.dropout_seed", "per_rank or shared", &C::dist, &DistConfig::dropout_seed),
      plain_key<C>("dist.desync_ranks", "none, all or ranks like 1,3", &C::dist, &DistConfig::desync_ranks),
      config_key<C>("dist.timeout_s", "fail a collective after N s", at_least<int64_t>(1), &C::dist, &DistConfig::timeout_s),
      config_key<C>("dist.rank0_timeout_s", "the others wait N s at most while rank 0 evaluates and checkpoints",
                    at_least<int64_t>(1), &C::dist, &DistConfig::rank0_timeout_s),
      config_key<C>("dist.bucket_mb", "gradient all-reduce bucket (MB)", above(0.0), &C::dist, &DistConfig::bucket_mb),
      plain_key<C>("diagnostics.enabled", "per-step dispersion metrics", &C::diagnostics, &DiagnosticsConfig::enabled),
      plain_key<C>("diagnostics.pairwise", "off, exact or sketch", &C::diagnostics, &DiagnosticsConfig::pairwise),
      config_key<C>("diagnostics.sketch_dim", "count-sketch size", in_range<int64_t>(16, 1 << 20), &C::diagnostics, &DiagnosticsConfig::sketch_dim),
      config_key<C>("diagnostics.matrix_every", "pairwise cosine matrix every N steps (0: never)", at_least<int64_t>(0), &C::diagnostics, &DiagnosticsConfig::matrix_every),
      config_key<C>("checkpoint.every", "steps between checkpoints (0: end only)", at_least<int64_t>(0), &C::checkpoint, &CheckpointConfig::every),
      config_key<C>("checkpoint.keep", "newest checkpoints kept", at_least<int64_t>(1), &C::checkpoint, &CheckpointConfig::keep),
      plain_key<C>("checkpoint.at", "also checkpoint (kept) and evaluate after these steps: 240, 480", &C::checkpoint, &CheckpointConfig::at),
      config_key<C>("log.flush_every", "flush the run log every N steps", at_least<int64_t>(1), &C::log, &LogConfig::flush_every),
      plain_key<C>("hdet.enabled", "HDET: spread rates across replicas", &C::hdet, &HdetTrainConfig::enabled),
      plain_key<C>("hdet.alpha", "learning-rate spread half-width (paper 1/9)", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::alpha),
      plain_key<C>("hdet.sync_every", "steps between parameter averages", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::sync_every),
      plain_key<C>("hdet.auto_lr", "meta-update the base values at each sync", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::auto_lr),
      plain_key<C>("hdet.warmup_steps", "no meta-update before this step", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::warmup_steps),
      plain_key<C>("hdet.sigma", "softmax temperature over window losses", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::sigma),
      plain_key<C>("hdet.standardize", "standardize window losses before sigma", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::standardize),
      plain_key<C>("hdet.beta", "meta-update momentum", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::beta),
      plain_key<C>("hdet.meta_lr", "meta step lambda", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::meta_lr),
      plain_key<C>("hdet.paper_mode", "additive base-rate update (reference code)", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::paper_mode),
      plain_key<C>("hdet.min_scale", "lower bound of the base correction", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::min_scale),
      plain_key<C>("hdet.max_scale", "upper bound of the base correction", &C::hdet, &HdetTrainConfig::controller, &controllers::HdetConfig::max_scale),
      plain_key<C>("hdet.mode", "shared (gradient all-reduce) or local", &C::hdet, &HdetTrainConfig::mode),
      config_key<C>("hdet.replicas_per_rank", "virtual replicas per worker", in_range<int64_t>(1, 64), &C::hdet, &HdetTrainConfig::replicas_per_rank),
      config_key<C>("hdet.weight_decay_alpha", "also spread weight decay (0: no)", in_unit_interval_open_right(), &C::hdet, &HdetTrainConfig::weight_decay_alpha),
      config_key<C>("hdet.dropout_alpha", "also spread dropout (0: no)", in_unit_interval_open_right(), &C::hdet, &HdetTrainConfig::dropout_alpha),
      config_key<C>("hdet.dropout_max", "upper bound of every replica's dropout", in_open_range(0.0, 1.0), &C::hdet, &HdetTrainConfig::dropout_max),
      plain_key<C>("reweight.strategy", "uniform, linupper, quadratic, extremes or linear", &C::reweight, &ReweightConfig::strategy),
      config_key<C>("reweight.strength", "r: max/min weight <= e^(1/r)", above(0.0), &C::reweight, &ReweightConfig::strength),
      config_key<C>("reweight.warmup", "uniform weights for the first N steps", at_least<int64_t>(0), &C::reweight, &ReweightConfig::warmup),
      config_key<C>("reweight.histogram_every", "weight histogram every N steps (0: never)", at_least<int64_t>(0), &C::reweight, &ReweightConfig::histogram_every),
      config_key<C>("reweight.histogram_bins", "histogram bins over N w in [0, 4]", in_range<int64_t>(1, reweight::kMaxHistogramBins), &C::reweight, &ReweightConfig::histogram_bins),
      plain_key<C>("schedule.spec", "learning-rate schedule spec", &C::schedule),
  };
}

}  // namespace

const std::vector<ConfigKey<TrainConfig>>& train_config_schema() {
  static const std::vector<Key> schema = make_schema();
  return schema;
}

std::vector<std::pair<std::string, std::string>> config_values(const TrainConfig& c) {
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& key : train_config_schema()) values.emplace_back(key.name, key.get(c));
  return values;
}

}  // namespace lrkit::train
