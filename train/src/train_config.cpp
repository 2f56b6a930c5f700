#include "lrkit/train/train_config.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "lrkit/reweight/sample_weights.hpp"
#include "lrkit/schedules/factory.hpp"

namespace po = boost::program_options;

namespace lrkit::train {

void TrainConfig::validate() const {
  auto require = [](bool ok, const std::string& message) {
    if (!ok) throw std::invalid_argument(message);
  };
  model.validate();
  require(optim.name == "adamw" || optim.name == "sgd", "optim.name must be adamw or sgd (got '" + optim.name + "')");
  require(optim.weight_decay >= 0, "optim.weight_decay must be >= 0");
  require(optim.clip >= 0, "optim.clip must be >= 0 (0 disables clipping)");
  require(data.locality >= 0, "data.locality must be >= 0 bytes (got " + std::to_string(data.locality) + ")");
  require(train.steps >= 1, "train.steps must be >= 1 (got " + std::to_string(train.steps) + ")");
  require(train.batch >= 1, "train.batch must be >= 1 (got " + std::to_string(train.batch) + ")");
  require(train.accumulation >= 1 && train.batch % train.accumulation == 0,
          "train.batch (" + std::to_string(train.batch) + ") must be a multiple of train.accumulation (" +
              std::to_string(train.accumulation) + ")");
  require(train.device == "cpu" || train.device == "cuda", "train.device must be cpu or cuda (got '" + train.device + "')");
  require(train.log_every >= 1, "train.log_every must be >= 1");
  require(train.threads >= 0, "train.threads must be >= 0");
  require(eval.every >= 0 && eval.batches >= 1, "eval.every must be >= 0 and eval.batches >= 1");
  require(log.flush_every >= 1, "log.flush_every must be >= 1");
  require(train.nonfinite == "stop" || train.nonfinite == "skip", "train.nonfinite must be stop or skip (got '" + train.nonfinite + "')");
  require(checkpoint.every >= 0 && checkpoint.keep >= 1, "checkpoint.every must be >= 0 and checkpoint.keep >= 1");
  require(resume.empty() || init_from.empty(), "--resume and --init-from exclude each other");
  require(branch_from.empty() || init_from.empty(), "--branch-from and --init-from exclude each other");
  checkpoint_steps();
  require(nproc >= 1 && nproc <= 64, "--nproc must be in [1, 64] (got " + std::to_string(nproc) + ")");
  require(dist.timeout_s >= 1 && dist.bucket_mb > 0, "dist.timeout_s must be >= 1 and dist.bucket_mb > 0");
  require(train.precision == "fp32" || train.precision == "bf16", "train.precision must be fp32 or bf16 (got '" + train.precision + "')");
  require(dist.data_split == "sharded" || dist.data_split == "identical",
          "dist.data_split must be sharded or identical (got '" + dist.data_split + "')");
  require(dist.dropout_seed == "per_rank" || dist.dropout_seed == "shared",
          "dist.dropout_seed must be per_rank or shared (got '" + dist.dropout_seed + "')");
  desynced_ranks(1);  // syntax only; ranks beyond the world are checked when it is known
  require(diagnostics.pairwise == "off" || diagnostics.pairwise == "exact" || diagnostics.pairwise == "sketch",
          "diagnostics.pairwise must be off, exact or sketch (got '" + diagnostics.pairwise + "')");
  require(diagnostics.sketch_dim >= 16 && diagnostics.sketch_dim <= (1 << 20),
          "diagnostics.sketch_dim must be in [16, 1048576] (got " + std::to_string(diagnostics.sketch_dim) + ")");
  require(diagnostics.matrix_every >= 0, "diagnostics.matrix_every must be >= 0");
  require(diagnostics.enabled || diagnostics.pairwise == "off",
          "diagnostics.pairwise needs diagnostics.enabled = true");
  data_sources();
  data_proportions();
  require(data.mixing == "natural" || data.mixing == "temperature" || data.mixing == "upweight",
          "data.mixing must be natural, temperature or upweight (got '" + data.mixing + "')");
  require(data.mixing == "natural" || !data.sources.empty(), "data.mixing=" + data.mixing + " needs data.sources");
  require(data.sources.empty() || data.locality == 0, "data.locality needs a single corpus (data.sources is set)");
  require(!(data.mixing == "upweight" && reweight.enabled()),
          "data.mixing=upweight with reweight.strategy=" + reweight.strategy + " is not supported (two per-sample weightings)");
  try {
    schedules::parse_schedule(data.temperature, train.steps);
  } catch (const std::exception& e) {
    throw std::invalid_argument("data.temperature: " + std::string(e.what()));
  }
  eval_sets();
  reweight::parse_strategy(reweight.strategy);  // names the bad value
  require(reweight.strength > 0, "reweight.strength must be > 0 (got " + std::to_string(reweight.strength) + ")");
  require(reweight.warmup >= 0, "reweight.warmup must be >= 0 steps (got " + std::to_string(reweight.warmup) + ")");
  require(reweight.histogram_every >= 0 && reweight.histogram_bins >= 1,
          "reweight.histogram_every must be >= 0 and reweight.histogram_bins >= 1");
  require(!(reweight.enabled() && hdet.enabled),
          "reweight.strategy=" + reweight.strategy + " with hdet.enabled = true is not supported (the replicas' models differ, "
          "so their losses do not rank one batch)");
  if (hdet.enabled) {
    require(hdet.alpha >= 0 && hdet.alpha < 1, "hdet.alpha must be in [0, 1) (got " + std::to_string(hdet.alpha) + ")");
    require(hdet.weight_decay_alpha >= 0 && hdet.weight_decay_alpha < 1,
            "hdet.weight_decay_alpha must be in [0, 1) (got " + std::to_string(hdet.weight_decay_alpha) + ")");
    require(hdet.dropout_alpha >= 0 && hdet.dropout_alpha < 1,
            "hdet.dropout_alpha must be in [0, 1) (got " + std::to_string(hdet.dropout_alpha) + ")");
    require(hdet.weight_decay_alpha == 0 || optim.weight_decay > 0,
            "hdet.weight_decay_alpha > 0 spreads optim.weight_decay, which is 0");
    require(hdet.dropout_alpha == 0 || model.dropout > 0, "hdet.dropout_alpha > 0 spreads model.dropout, which is 0");
    require(hdet.dropout_max > 0 && hdet.dropout_max < 1, "hdet.dropout_max must be in (0, 1) (got " + std::to_string(hdet.dropout_max) + ")");
    require(hdet.dropout_alpha == 0 || model.dropout <= hdet.dropout_max,
            "model.dropout (" + std::to_string(model.dropout) + ") is above hdet.dropout_max (" + std::to_string(hdet.dropout_max) + ")");
    require(hdet.sync_every >= 1, "hdet.sync_every must be >= 1 (got " + std::to_string(hdet.sync_every) + ")");
    require(hdet.warmup_steps >= 0, "hdet.warmup_steps must be >= 0");
    require(hdet.sigma > 0, "hdet.sigma must be > 0 (got " + std::to_string(hdet.sigma) + ")");
    require(hdet.beta >= 0 && hdet.beta < 1, "hdet.beta must be in [0, 1) (got " + std::to_string(hdet.beta) + ")");
    require(hdet.meta_lr > 0, "hdet.meta_lr must be > 0 (got " + std::to_string(hdet.meta_lr) + ")");
    require(hdet.mode == "shared" || hdet.mode == "local", "hdet.mode must be shared or local (got '" + hdet.mode + "')");
    require(hdet.replicas_per_rank >= 1 && hdet.replicas_per_rank <= 64,
            "hdet.replicas_per_rank must be in [1, 64] (got " + std::to_string(hdet.replicas_per_rank) + ")");
    require(hdet.min_scale > 0 && hdet.min_scale <= 1 && hdet.max_scale >= 1,
            "hdet.min_scale and hdet.max_scale need 0 < min_scale <= 1 <= max_scale");
    require(hdet.mode == "shared" || diagnostics.pairwise == "off",
            "diagnostics.pairwise=" + diagnostics.pairwise + " measures the gradient all-reduce, which hdet.mode=local does not do");
  }
}

namespace {

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, ',')) {
    const auto first = item.find_first_not_of(" \t");
    const auto last = item.find_last_not_of(" \t");
    items.push_back(first == std::string::npos ? "" : item.substr(first, last - first + 1));
  }
  return items;
}

// The whole of `text` as a number, or nothing (empty, trailing characters, out of range).
std::optional<double> parse_number(const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (used != text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

// The whole of `text` as a whole number, or nothing.
std::optional<int64_t> parse_integer(const std::string& text) {
  if (text.empty() || text.find_first_not_of("+-0123456789") != std::string::npos) return std::nullopt;
  const auto v = parse_number(text);
  if (!v || std::fabs(*v) > 9e15) return std::nullopt;
  return static_cast<int64_t>(*v);
}

bool valid_name(const std::string& name) {
  return !name.empty() &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string::npos;
}

}  // namespace

std::vector<DataSource> TrainConfig::data_sources() const {
  if (data.sources.empty()) return {{"heldout", data.path}};
  std::vector<DataSource> sources;
  const auto items = split_list(data.sources);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto equals = items[i].find('=');
    DataSource source{items[i].substr(0, equals), equals == std::string::npos ? "" : items[i].substr(equals + 1)};
    if (equals == std::string::npos || !valid_name(source.name) || source.path.empty())
      throw std::invalid_argument("data.sources entry " + std::to_string(i + 1) + " ('" + items[i] +
                                  "') must be NAME=PATH with NAME of letters, digits, _ and -");
    for (const auto& earlier : sources)
      if (earlier.name == source.name) throw std::invalid_argument("data.sources names '" + source.name + "' twice");
    sources.push_back(source);
  }
  return sources;
}

std::vector<double> TrainConfig::data_proportions() const {
  if (data.proportions.empty()) return {};
  const auto items = split_list(data.proportions);
  const auto sources = data_sources();
  if (data.sources.empty()) throw std::invalid_argument("data.proportions needs data.sources");
  if (items.size() != sources.size())
    throw std::invalid_argument("data.proportions has " + std::to_string(items.size()) + " entries for " +
                                std::to_string(sources.size()) + " data.sources");
  std::vector<double> q;
  for (size_t i = 0; i < items.size(); ++i) {
    const auto v = parse_number(items[i]);
    if (!v || !(*v > 0))
      throw std::invalid_argument("data.proportions entry " + std::to_string(i + 1) + " ('" + items[i] +
                                  "') must be a number > 0");
    q.push_back(*v);
  }
  return q;
}

std::vector<EvalSet> TrainConfig::eval_sets() const {
  std::vector<EvalSet> sets;
  const auto items = split_list(eval.sets);
  for (size_t i = 0; i < items.size(); ++i) {
    const auto& item = items[i];
    const auto equals = item.find('=');
    EvalSet set{item.substr(0, equals), equals == std::string::npos ? "" : item.substr(equals + 1)};
    if (!valid_name(set.name) || (equals != std::string::npos && set.path.empty()))
      throw std::invalid_argument("eval.sets entry " + std::to_string(i + 1) + " ('" + item +
                                  "') must be NAME or NAME=PATH with NAME of letters, digits, _ and -");
    if (set.path.empty() && set.name != "heldout")
      throw std::invalid_argument("eval.sets entry '" + item + "' names no file (only 'heldout' may stand alone)");
    const bool mixture_heldout = set.name == "heldout" && set.path.empty() && !data.sources.empty();
    std::vector<EvalSet> expanded;
    if (mixture_heldout)
      for (const auto& source : data_sources()) expanded.push_back({source.name, source.path});
    else
      expanded.push_back(set);
    for (const auto& entry : expanded) {
      for (const auto& earlier : sets)
        if (earlier.name == entry.name) throw std::invalid_argument("eval.sets names '" + entry.name + "' twice");
      sets.push_back(entry);
    }
  }
  if (sets.empty()) throw std::invalid_argument("eval.sets is empty (the default is 'heldout')");
  return sets;
}

std::vector<int64_t> TrainConfig::checkpoint_steps() const {
  std::vector<int64_t> steps;
  for (const auto& item : checkpoint.at.empty() ? std::vector<std::string>() : split_list(checkpoint.at)) {
    const auto step = parse_integer(item);
    if (!step || *step < 1 || *step > train.steps)
      throw std::invalid_argument("checkpoint.at entry '" + item + "' must be a step in [1, train.steps = " +
                                  std::to_string(train.steps) + "]");
    if (!steps.empty() && *step <= steps.back())
      throw std::invalid_argument("checkpoint.at must be increasing (" + item + " after " + std::to_string(steps.back()) + ")");
    steps.push_back(*step);
  }
  return steps;
}

std::vector<bool> TrainConfig::desynced_ranks(int64_t world_size) const {
  std::vector<bool> flags(static_cast<size_t>(world_size), dist.desync_ranks == "all");
  if (dist.desync_ranks == "none" || dist.desync_ranks == "all") return flags;
  for (const auto& item : split_list(dist.desync_ranks)) {
    const auto parsed = parse_integer(item);
    const int64_t rank = parsed.value_or(-1);
    if (rank < 0)
      throw std::invalid_argument("dist.desync_ranks must be none, all or a list of ranks like 1,3 (bad entry '" + item + "')");
    if (world_size > 1 && rank >= world_size)
      throw std::invalid_argument("dist.desync_ranks names rank " + item + " but there are " +
                                  std::to_string(world_size) + " workers");
    if (rank < world_size) flags[static_cast<size_t>(rank)] = true;
  }
  return flags;
}

bool parse_train_config(const std::vector<std::string>& args, TrainConfig& c, std::string& help) {
  po::options_description keys("configuration keys (INI [section] key = value, or --section.key=value)");
  keys.add_options()
      ("model.layers", po::value(&c.model.layers)->default_value(c.model.layers), "transformer blocks")
      ("model.heads", po::value(&c.model.heads)->default_value(c.model.heads), "attention heads")
      ("model.width", po::value(&c.model.width)->default_value(c.model.width), "embedding width")
      ("model.context", po::value(&c.model.context)->default_value(c.model.context), "context length in bytes")
      ("model.dropout", po::value(&c.model.dropout)->default_value(c.model.dropout), "dropout probability")
      ("data.path", po::value(&c.data.path)->default_value(c.data.path), "text file (bytes are tokens)")
      ("data.heldout", po::value(&c.data.heldout)->default_value(c.data.heldout), "held-out fraction (the file's tail)")
      ("data.locality", po::value(&c.data.locality)->default_value(c.data.locality), "bytes: each step's batch from one region (0: anywhere)")
      ("data.sources", po::value(&c.data.sources)->default_value(c.data.sources), "a mixture instead of data.path: NAME=PATH, ...")
      ("data.proportions", po::value(&c.data.proportions)->default_value(c.data.proportions), "source proportions q (default: their sizes)")
      ("data.mixing", po::value(&c.data.mixing)->default_value(c.data.mixing), "natural, temperature or upweight")
      ("data.temperature", po::value(&c.data.temperature)->default_value(c.data.temperature), "tau as a schedule spec (p ~ q^(1/tau))")
      ("optim.name", po::value(&c.optim.name)->default_value(c.optim.name), "adamw or sgd")
      ("optim.weight_decay", po::value(&c.optim.weight_decay)->default_value(c.optim.weight_decay), "on matrices only")
      ("optim.beta1", po::value(&c.optim.beta1)->default_value(c.optim.beta1), "AdamW beta1")
      ("optim.beta2", po::value(&c.optim.beta2)->default_value(c.optim.beta2), "AdamW beta2")
      ("optim.eps", po::value(&c.optim.eps)->default_value(c.optim.eps), "AdamW epsilon")
      ("optim.momentum", po::value(&c.optim.momentum)->default_value(c.optim.momentum), "SGD momentum")
      ("optim.clip", po::value(&c.optim.clip)->default_value(c.optim.clip), "gradient-norm clip (0: off)")
      ("train.steps", po::value(&c.train.steps)->default_value(c.train.steps), "optimizer steps")
      ("train.batch", po::value(&c.train.batch)->default_value(c.train.batch), "sequences per step")
      ("train.accumulation", po::value(&c.train.accumulation)->default_value(c.train.accumulation), "micro-batches per step")
      ("train.seed", po::value(&c.train.seed)->default_value(c.train.seed), "seed of weights and data order")
      ("train.device", po::value(&c.train.device)->default_value(c.train.device), "cpu or cuda")
      ("train.log_every", po::value(&c.train.log_every)->default_value(c.train.log_every), "progress line every N steps")
      ("train.threads", po::value(&c.train.threads)->default_value(c.train.threads), "intra-op threads (0: all cores)")
      ("eval.every", po::value(&c.eval.every)->default_value(c.eval.every), "held-out evaluation every N steps (0: end only)")
      ("eval.batches", po::value(&c.eval.batches)->default_value(c.eval.batches), "evaluation batches")
      ("eval.sets", po::value(&c.eval.sets)->default_value(c.eval.sets), "named sets: heldout, NAME=PATH, ...")
      ("train.precision", po::value(&c.train.precision)->default_value(c.train.precision), "fp32 or bf16 (autocast)")
      ("dist.data_split", po::value(&c.dist.data_split)->default_value(c.dist.data_split), "sharded or identical (control)")
      ("dist.dropout_seed", po::value(&c.dist.dropout_seed)->default_value(c.dist.dropout_seed), "per_rank or shared")
      ("dist.desync_ranks", po::value(&c.dist.desync_ranks)->default_value(c.dist.desync_ranks), "none, all or ranks like 1,3")
      ("diagnostics.enabled", po::value(&c.diagnostics.enabled)->default_value(c.diagnostics.enabled), "per-step dispersion metrics")
      ("diagnostics.pairwise", po::value(&c.diagnostics.pairwise)->default_value(c.diagnostics.pairwise), "off, exact or sketch")
      ("diagnostics.sketch_dim", po::value(&c.diagnostics.sketch_dim)->default_value(c.diagnostics.sketch_dim), "count-sketch size")
      ("diagnostics.matrix_every", po::value(&c.diagnostics.matrix_every)->default_value(c.diagnostics.matrix_every), "pairwise cosine matrix every N steps (0: never)")
      ("train.nonfinite", po::value(&c.train.nonfinite)->default_value(c.train.nonfinite), "on a non-finite loss: stop or skip")
      ("checkpoint.every", po::value(&c.checkpoint.every)->default_value(c.checkpoint.every), "steps between checkpoints (0: end only)")
      ("checkpoint.keep", po::value(&c.checkpoint.keep)->default_value(c.checkpoint.keep), "newest checkpoints kept")
      ("checkpoint.at", po::value(&c.checkpoint.at)->default_value(c.checkpoint.at), "also checkpoint (kept) and evaluate after these steps: 240, 480")
      ("dist.timeout_s", po::value(&c.dist.timeout_s)->default_value(c.dist.timeout_s), "fail a collective after N s")
      ("dist.bucket_mb", po::value(&c.dist.bucket_mb)->default_value(c.dist.bucket_mb), "gradient all-reduce bucket (MB)")
      ("log.flush_every", po::value(&c.log.flush_every)->default_value(c.log.flush_every), "flush the run log every N steps")
      ("hdet.enabled", po::value(&c.hdet.enabled)->default_value(c.hdet.enabled), "HDET: spread rates across replicas")
      ("hdet.alpha", po::value(&c.hdet.alpha)->default_value(c.hdet.alpha), "learning-rate spread half-width (paper 1/9)")
      ("hdet.sync_every", po::value(&c.hdet.sync_every)->default_value(c.hdet.sync_every), "steps between parameter averages")
      ("hdet.auto_lr", po::value(&c.hdet.auto_lr)->default_value(c.hdet.auto_lr), "meta-update the base values at each sync")
      ("hdet.warmup_steps", po::value(&c.hdet.warmup_steps)->default_value(c.hdet.warmup_steps), "no meta-update before this step")
      ("hdet.sigma", po::value(&c.hdet.sigma)->default_value(c.hdet.sigma), "softmax temperature over window losses")
      ("hdet.standardize", po::value(&c.hdet.standardize)->default_value(c.hdet.standardize), "standardize window losses before sigma")
      ("hdet.beta", po::value(&c.hdet.beta)->default_value(c.hdet.beta), "meta-update momentum")
      ("hdet.meta_lr", po::value(&c.hdet.meta_lr)->default_value(c.hdet.meta_lr), "meta step lambda")
      ("hdet.mode", po::value(&c.hdet.mode)->default_value(c.hdet.mode), "shared (gradient all-reduce) or local")
      ("hdet.replicas_per_rank", po::value(&c.hdet.replicas_per_rank)->default_value(c.hdet.replicas_per_rank), "virtual replicas per worker")
      ("hdet.paper_mode", po::value(&c.hdet.paper_mode)->default_value(c.hdet.paper_mode), "additive base-rate update (reference code)")
      ("hdet.min_scale", po::value(&c.hdet.min_scale)->default_value(c.hdet.min_scale), "lower bound of the base correction")
      ("hdet.max_scale", po::value(&c.hdet.max_scale)->default_value(c.hdet.max_scale), "upper bound of the base correction")
      ("hdet.weight_decay_alpha", po::value(&c.hdet.weight_decay_alpha)->default_value(c.hdet.weight_decay_alpha), "also spread weight decay (0: no)")
      ("hdet.dropout_alpha", po::value(&c.hdet.dropout_alpha)->default_value(c.hdet.dropout_alpha), "also spread dropout (0: no)")
      ("hdet.dropout_max", po::value(&c.hdet.dropout_max)->default_value(c.hdet.dropout_max), "upper bound of every replica's dropout")
      ("reweight.strategy", po::value(&c.reweight.strategy)->default_value(c.reweight.strategy), "uniform, linupper, quadratic, extremes or linear")
      ("reweight.strength", po::value(&c.reweight.strength)->default_value(c.reweight.strength), "r: max/min weight <= e^(1/r)")
      ("reweight.warmup", po::value(&c.reweight.warmup)->default_value(c.reweight.warmup), "uniform weights for the first N steps")
      ("reweight.histogram_every", po::value(&c.reweight.histogram_every)->default_value(c.reweight.histogram_every), "weight histogram every N steps (0: never)")
      ("reweight.histogram_bins", po::value(&c.reweight.histogram_bins)->default_value(c.reweight.histogram_bins), "histogram bins over N w in [0, 4]")
      ("schedule.spec", po::value(&c.schedule)->default_value(c.schedule), "learning-rate schedule spec");
  po::options_description command("options");
  std::string config_path;
  command.add_options()("help,h", "show this help")("config,c", po::value(&config_path), "INI configuration file")(
      "out,o", po::value(&c.out)->default_value(c.out), "run directory: log.h5 and checkpoints/")(
      "resume", po::value(&c.resume), "auto (newest checkpoint in the run directory) or a checkpoint file")(
      "init-from", po::value(&c.init_from), "start from this checkpoint's weights (new optimizer, step 0)")(
      "branch-from", po::value(&c.branch_from), "continue this checkpoint (weights, optimizer, step) under this run's schedule")(
      "nproc", po::value(&c.nproc)->default_value(c.nproc), "start N local data-parallel workers (Gloo)");
  po::options_description all;
  all.add(command).add(keys);

  for (const auto& a : args) c.command_line += (c.command_line.empty() ? "" : " ") + a;
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).run(), vm);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: lrkit train [--config FILE] [--out DIR] [--section.key=value ...]\n\n" << command << "\n" << keys;
      help = text.str();
      return false;
    }
    if (vm.count("config")) {
      const std::string file = vm["config"].as<std::string>();
      std::ifstream in(file);
      if (!in) throw std::invalid_argument("cannot open config file '" + file + "'");
      std::stringstream text;
      text << in.rdbuf();
      c.config_text = text.str();
      std::istringstream parse_from(c.config_text);
      try {
        po::store(po::parse_config_file(parse_from, keys), vm);  // command-line values stored first win
      } catch (const po::error& e) {
        throw std::invalid_argument("config file '" + file + "': " + e.what());
      }
    }
    po::notify(vm);
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  c.validate();
  return true;
}

}  // namespace lrkit::train
