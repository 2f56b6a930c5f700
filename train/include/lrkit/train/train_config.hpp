// Everything a training run is configured by. Read from an INI file
// ([section] key = value) with every key overridable on the command line as
// --section.key=value; unknown keys are errors that name the key. The keys,
// their help, rules and text forms are declared once, in train_config_schema().
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/controllers/hdet.hpp"
#include "lrkit/reweight/sample_weights.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/train/config_choice.hpp"
#include "lrkit/train/config_schema.hpp"
#include "lrkit/train/gpt_config.hpp"

namespace lrkit::train {

enum class Mixing { natural, temperature, upweight };
enum class OptimizerName { adamw, sgd };
enum class DeviceKind { cpu, cuda };
enum class NonFinite { stop, skip };
enum class Precision { fp32, bf16 };
enum class DataSplit { sharded, identical };
enum class DropoutSeed { per_rank, shared };
enum class Pairwise { off, exact, sketch };
enum class HdetMode { shared, local };
enum class DistBackend { auto_, nccl, gloo };

template <> struct ChoiceNames<Mixing> {
  static constexpr std::pair<Mixing, const char*> values[] = {
      {Mixing::natural, "natural"}, {Mixing::temperature, "temperature"}, {Mixing::upweight, "upweight"}};
};
template <> struct ChoiceNames<OptimizerName> {
  static constexpr std::pair<OptimizerName, const char*> values[] = {{OptimizerName::adamw, "adamw"}, {OptimizerName::sgd, "sgd"}};
};
template <> struct ChoiceNames<DeviceKind> {
  static constexpr std::pair<DeviceKind, const char*> values[] = {{DeviceKind::cpu, "cpu"}, {DeviceKind::cuda, "cuda"}};
};
template <> struct ChoiceNames<NonFinite> {
  static constexpr std::pair<NonFinite, const char*> values[] = {{NonFinite::stop, "stop"}, {NonFinite::skip, "skip"}};
};
template <> struct ChoiceNames<Precision> {
  static constexpr std::pair<Precision, const char*> values[] = {{Precision::fp32, "fp32"}, {Precision::bf16, "bf16"}};
};
template <> struct ChoiceNames<DataSplit> {
  static constexpr std::pair<DataSplit, const char*> values[] = {{DataSplit::sharded, "sharded"}, {DataSplit::identical, "identical"}};
};
template <> struct ChoiceNames<DropoutSeed> {
  static constexpr std::pair<DropoutSeed, const char*> values[] = {{DropoutSeed::per_rank, "per_rank"}, {DropoutSeed::shared, "shared"}};
};
template <> struct ChoiceNames<Pairwise> {
  static constexpr std::pair<Pairwise, const char*> values[] = {
      {Pairwise::off, "off"}, {Pairwise::exact, "exact"}, {Pairwise::sketch, "sketch"}};
};
template <> struct ChoiceNames<DistBackend> {
  static constexpr std::pair<DistBackend, const char*> values[] = {
      {DistBackend::auto_, "auto"}, {DistBackend::nccl, "nccl"}, {DistBackend::gloo, "gloo"}};
};
template <> struct ChoiceNames<HdetMode> {
  static constexpr std::pair<HdetMode, const char*> values[] = {{HdetMode::shared, "shared"}, {HdetMode::local, "local"}};
};
template <> struct ChoiceNames<reweight::Strategy> {
  static constexpr std::pair<reweight::Strategy, const char*> values[] = {
      {reweight::Strategy::uniform, "uniform"},   {reweight::Strategy::linupper, "linupper"},
      {reweight::Strategy::quadratic, "quadratic"}, {reweight::Strategy::extremes, "extremes"},
      {reweight::Strategy::linear, "linear"}};
};

struct DataConfig {
  std::string path = "data/kjv.txt";
  double heldout = 0.05;
  int64_t locality = 0;  // bytes; > 0: each step's batch comes from one region of this size (see BatchKey)
  // A mixture of corpora (data_mixture.hpp) instead of `path`: "NAME=PATH, NAME=PATH, ...".
  std::string sources;
  std::string proportions;               // q_i as "0.95, 0.05"; empty: the sources' training sizes
  Choice<Mixing> mixing = Mixing::natural;
  std::string temperature = "constant(peak=1)";  // tau as a schedule spec over the run
};

struct DataSource {
  std::string name, path;
};

struct OptimConfig {
  Choice<OptimizerName> name = OptimizerName::adamw;
  double weight_decay = 0.1;
  double beta1 = 0.9, beta2 = 0.95, eps = 1e-8;
  double momentum = 0.9;  // sgd
  double clip = 1.0;      // global gradient-norm clip; 0 disables
  // The momentum (AdamW's beta1, SGD's momentum) cycled against the rate of an onecycle or triangular schedule, as
  // PyTorch's OneCycleLR and CyclicLR do: max_momentum where the rate is lowest, base_momentum at its peak.
  bool cycle_momentum = false;
  double base_momentum = 0.85, max_momentum = 0.95;  // OneCycleLR's defaults
};

struct LoopConfig {
  int64_t steps = 200;
  int64_t batch = 16;         // sequences per optimizer step
  int64_t accumulation = 1;   // micro-batches per step
  uint64_t seed = 1234;
  Choice<DeviceKind> device = DeviceKind::cpu;
  int64_t log_every = 10;
  int64_t threads = 0;         // LibTorch intra-op threads; 0: the worker's share of the cores
  Choice<NonFinite> nonfinite = NonFinite::stop;  // a non-finite loss: stop (keep the last checkpoint) or skip the update
  // nonfinite = skip: stop as diverged after this many updates skipped in a row (0: never). Skipping leaves the weights
  // as they are, so a non-finite loss that outlasts a few batches is the weights' (and would last to the end).
  int64_t skip_limit = 20;
  // Spikes (ALGORITHMS.md section 9, llm.c's -sl/-sg): skip an update whose loss (gradient norm) lies more than this
  // many standard deviations above the last spike_window updates' (0: never). z is logged either way.
  double skip_loss_z = 0;
  double skip_grad_z = 0;
  int64_t spike_window = 128;
  Choice<Precision> precision = Precision::fp32;  // bf16: autocast of the forward pass; weights and optimizer stay fp32
  bool tf32 = true;            // CUDA: fp32 matmuls in TF32 (torch.set_float32_matmul_precision("high"))
  double peak_tflops = 0;      // MFU denominator; 0: the GPU's known bf16 peak (none on the CPU: no MFU)
  int64_t profile_steps = 0;   // updates traced by the operator (and GPU kernel) profiler; 0: none
  int64_t profile_from = 11;   // the first traced update (1-based): after the warm-up
};

struct DistConfig {
  Choice<DistBackend> backend = DistBackend::auto_;  // auto: NCCL on CUDA, Gloo on the CPU
  int64_t timeout_s = 60;   // a collective waiting longer than this fails the run
  // How long the others wait while rank 0 evaluates and writes a checkpoint alone (a large model's checkpoint on a
  // network filesystem can take minutes; 30 minutes is torch.distributed's default timeout).
  int64_t rank0_timeout_s = 1800;
  double bucket_mb = 25.0;  // gradient all-reduce bucket size
  // Knobs that deliberately desynchronize ranks (ALGORITHMS.md section 7):
  Choice<DataSplit> data_split = DataSplit::sharded;        // sharded: disjoint rows of one stream | identical: every rank reads rank 0's rows
  Choice<DropoutSeed> dropout_seed = DropoutSeed::per_rank;  // shared: every rank draws the same dropout masks
  std::string desync_ranks = "none";      // none | all | a list like 1,3: these ranks take their own data stream and dropout seed
};

// What the diagnostics measure every optimizer step (ALGORITHMS.md section 7).
struct DiagnosticsConfig {
  bool enabled = true;          // dispersion, cos_to_mean and the scalar pairwise form
  Choice<Pairwise> pairwise = Pairwise::off;  // exact: one extra all-reduce | sketch: all-gather of a count sketch
  int64_t sketch_dim = 4096;
  int64_t matrix_every = 100;   // pairwise cosine matrix (from sketches) every N steps; 0: never
};

// HDET (ALGORITHMS.md section 6): replicas = workers x replicas_per_rank. The
// controller's own settings (alpha, sync_every, sigma, ...) are its Config;
// the trainer sets its replica count and seeds per run.
struct HdetTrainConfig {
  bool enabled = false;
  Choice<HdetMode> mode = HdetMode::shared;  // shared: gradients all-reduced every step | local: only parameters, every sync
  int64_t replicas_per_rank = 1;  // virtual replicas inside each worker process
  double weight_decay_alpha = 0;  // > 0: also spread optim.weight_decay
  double dropout_alpha = 0;       // > 0: also spread model.dropout ...
  double dropout_max = 0.5;       // ... keeping every replica's dropout in [0, dropout_max]
  controllers::HdetConfig controller;  // alpha is the learning rate's spread (0: plain data parallel, bit for bit)
};

// Loss-based sample reweighting over the global batch (ALGORITHMS.md section 8).
struct ReweightConfig {
  Choice<reweight::Strategy> strategy = reweight::Strategy::uniform;
  double strength = 1.0;             // r: max w / min w <= e^(1/r); the paper: 0.4 (medium/large), 1.0 (small)
  int64_t warmup = 0;                // uniform weights for the first N steps (the paper: 1000)
  int64_t histogram_every = 100;     // relative-weight histogram into the log every N steps (0: never)
  int64_t histogram_bins = 20;       // over N w in [0, 4]
  bool enabled() const { return strategy != reweight::Strategy::uniform; }
};

struct CheckpointConfig {
  int64_t every = 0;  // steps between checkpoints; 0: only at the end
  int64_t keep = 3;   // newest checkpoints kept
  std::string at;     // "240, 480": also checkpoint (never pruned) and evaluate after these steps
};

struct LogConfig {
  int64_t flush_every = 10;  // run-log rows reach the disk every N steps (and at exit)
};

struct EvalConfig {
  int64_t every = 50;
  int64_t batches = 4;
  // Comma-separated named sets: `heldout` is the training file's held-out tail;
  // `name=path` is the held-out tail of another text file (e.g. the old corpus).
  std::string sets = "heldout";
};

struct EvalSet {
  std::string name, path;  // path empty: the training corpus's held-out split
};

struct TrainConfig {
  GptConfig model;
  DataConfig data;
  OptimConfig optim;
  LoopConfig train;
  EvalConfig eval;
  LogConfig log;
  CheckpointConfig checkpoint;
  DistConfig dist;
  DiagnosticsConfig diagnostics;
  HdetTrainConfig hdet;
  ReweightConfig reweight;
  int64_t nproc = 1;      // local workers `lrkit train` starts itself
  std::string resume;     // "", "auto" (newest checkpoint in out/, if any) or a checkpoint path
  std::string init_from;  // start a new run from a checkpoint's weights
  // Continue a checkpoint's whole state (weights, optimizer, step) into a new run
  // directory under this config's schedule: a decay branch forked from a main run.
  // A checkpoint already in `out` (with resume = auto) takes precedence.
  std::string branch_from;
  bool overwrite = false;  // `lrkit train`: move a run directory holding an earlier run aside instead of refusing
  std::string schedule = "wsd(peak=1e-3, warmup=5%, decay=20%)";
  std::string out = "out/run";
  std::string config_text;   // the file's content, kept for provenance
  std::string command_line;  // the arguments as given
  std::string config_file;   // the --config file read, "" for none
  std::vector<std::string> keys_from_config_file;  // the keys whose value is the file's (the command line did not set them)

  // Checks cross-field rules; throws std::invalid_argument naming the key.
  void validate() const;
  // `message` led by the lines of the config file that set the keys it names ("config file 'run.ini' lines 4 and 5:
  // train.batch (30) must be a multiple of train.accumulation (4)"), so that a rule across keys points into the file
  // as a key's own rule does; `message` itself where it names no key the file set.
  std::string placed_in_config_file(const std::string& message) const;
  // Checks the rules that need the number of workers: train.batch splits evenly over them (and their HDET
  // replicas and micro-batches), dist.desync_ranks names none beyond them. The launcher calls it before it
  // starts any worker, each worker again for the world it joined.
  void validate_world(int64_t workers) const;
  // data.sources parsed (or one source `path`); throws std::invalid_argument naming the bad entry.
  std::vector<DataSource> data_sources() const;
  // data.proportions parsed, one per source; empty when not given.
  std::vector<double> data_proportions() const;
  // eval.sets parsed; `heldout` stands for every source's held-out tail when
  // data.sources is set. Throws std::invalid_argument naming the bad entry.
  std::vector<EvalSet> eval_sets() const;
  // schedule built for train.steps, its rates checked over the whole run (schedules::require_usable_rates); throws
  // schedules::SpecError. Not part of validate(): a table or refined schedule reads a file, and `lrkit log check`
  // validates a finished run's config after that file may be gone.
  schedules::Schedule learning_rate_schedule() const;
  // Every file the run reads as data (the sources and the evaluation sets) checked without reading it
  // (ByteCorpus::check); throws CorpusError naming the file. Not part of validate() either: a sweep is planned,
  // and a finished run's config checked, where the data may be absent.
  void check_data_files() const;
  // checkpoint.at parsed: increasing steps in [1, train.steps]; throws naming the bad entry.
  std::vector<int64_t> checkpoint_steps() const;
  // dist.desync_ranks parsed for `world_size` ranks.
  std::vector<bool> desynced_ranks(int64_t world_size) const;
  // Model replicas each worker process holds: hdet.replicas_per_rank when HDET is on, else 1.
  int64_t replicas_per_rank() const { return hdet.enabled ? hdet.replicas_per_rank : 1; }
  // The hyper-parameters HDET spreads, in order: "lr", then "weight_decay" and "dropout" when their alpha > 0.
  std::vector<std::string> hdet_spread() const {
    std::vector<std::string> names = {"lr"};
    if (hdet.weight_decay_alpha > 0) names.push_back("weight_decay");
    if (hdet.dropout_alpha > 0) names.push_back("dropout");
    return names;
  }
  // HDET's replicas never differ: shared gradients and nothing spread. They
  // then need no averaging and reproduce plain data parallel bit for bit.
  bool hdet_replicas_identical() const {
    return !hdet.enabled ||
           (hdet.mode == HdetMode::shared && hdet.controller.alpha == 0 && hdet.weight_decay_alpha == 0 && hdet.dropout_alpha == 0);
  }
};

// Every configuration key, in --help order.
const std::vector<ConfigKey<TrainConfig>>& train_config_schema();

// Every key's effective value as (name, text): what the run log records. Each
// text parses back (--name=text) into the same value.
std::vector<std::pair<std::string, std::string>> config_values(const TrainConfig& config);

// Parses `--config FILE` (optional) and `--section.key=value` overrides.
// Throws std::invalid_argument with one clear line on any bad input; returns
// false when --help was given (the help text is written to `help`).
bool parse_train_config(const std::vector<std::string>& args, TrainConfig& config, std::string& help);

}  // namespace lrkit::train
