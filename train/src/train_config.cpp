#include "lrkit/train/train_config.hpp"

#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "lrkit/common/closest_name.hpp"
#include "lrkit/common/ini_lines.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/check.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/usable_rates.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/gpt.hpp"
#include "lrkit/train/named_paths.hpp"
#include "lrkit/options/option_typo.hpp"
#include "lrkit/train/stray_arguments.hpp"
#include "lrkit/options/whole_number_option.hpp"

namespace po = boost::program_options;

namespace lrkit::train {

void TrainConfig::validate() const {
  for (const auto& key : train_config_schema()) key.check(*this);
  model.validate();
  require(train.batch % train.accumulation == 0, "train.batch (" + std::to_string(train.batch) +
                                                     ") must be a multiple of train.accumulation (" +
                                                     std::to_string(train.accumulation) + ")");
  require(resume.empty() || init_from.empty(), "--resume and --init-from exclude each other");
  require(branch_from.empty() || init_from.empty(), "--branch-from and --init-from exclude each other");
  require(nproc >= 1 && nproc <= 64, "--nproc must be in [1, 64] (got " + std::to_string(nproc) + ")");
  require(!(model.fused_norm == FusedNorm::on && train.device == DeviceKind::cpu),
          "model.fused_norm=on needs train.device=cuda (the fused kernel is CUDA's; auto uses it where it can)");
  fused_norm(model);  // refuses on in a build without the kernel
  require(!(dist.backend == DistBackend::nccl && train.device == DeviceKind::cpu),
          "dist.backend=nccl needs train.device=cuda (NCCL reduces GPU tensors only); on the CPU use gloo");
  require(train.profile_steps == 0 || train.profile_from + train.profile_steps - 1 <= train.steps,
          "train.profile_from (" + std::to_string(train.profile_from) + ") + train.profile_steps (" +
              std::to_string(train.profile_steps) + ") - 1 is beyond train.steps (" + std::to_string(train.steps) + ")");
  checkpoint_steps();
  desynced_ranks(1);  // syntax only; ranks beyond the world are checked when it is known
  require(diagnostics.enabled || diagnostics.pairwise == Pairwise::off, "diagnostics.pairwise needs diagnostics.enabled = true");
  data_sources();
  data_proportions();
  require(data.mixing == Mixing::natural || !data.sources.empty(), "data.mixing=" + data.mixing.text() + " needs data.sources");
  require(data.sources.empty() || data.locality == 0, "data.locality needs a single corpus (data.sources is set)");
  require(!(data.mixing == Mixing::upweight && reweight.enabled()),
          "data.mixing=upweight with reweight.strategy=" + reweight.strategy.text() +
              " is not supported (two per-sample weightings)");
  try {
    schedules::parse_schedule(data.temperature, train.steps);
  } catch (const std::exception& e) {
    throw std::invalid_argument("data.temperature: " + std::string(e.what()));
  }
  eval_sets();
  if (optim.cycle_momentum) {
    require(optim.base_momentum <= optim.max_momentum,
            "optim.base_momentum (" + format_number(optim.base_momentum) + ") must not exceed optim.max_momentum (" +
                format_number(optim.max_momentum) + ")");
    // The spec alone: learning_rate_schedule() also checks every step's rate, which the trainer does when it starts.
    require(schedules::parse_schedule(schedule, train.steps)
                .cycled_momentum(0, optim.base_momentum, optim.max_momentum)
                .has_value(),
            "optim.cycle_momentum = true needs a schedule.spec that cycles the momentum against its rate, onecycle or "
            "triangular (with at most a warmup in front); '" + schedule + "' does not");
  }
  require(!(reweight.enabled() && hdet.enabled),
          "reweight.strategy=" + reweight.strategy.text() + " with hdet.enabled = true is not supported (the replicas' models "
          "differ, so their losses do not rank one batch)");
  if (!hdet.enabled) return;
  auto controller = hdet.controller;
  controller.replicas = hdet.replicas_per_rank;  // the world is known only when the run starts
  controller.validate();
  require(hdet.weight_decay_alpha == 0 || optim.weight_decay > 0, "hdet.weight_decay_alpha > 0 spreads optim.weight_decay, which is 0");
  require(hdet.dropout_alpha == 0 || model.dropout > 0, "hdet.dropout_alpha > 0 spreads model.dropout, which is 0");
  require(hdet.dropout_alpha == 0 || model.dropout <= hdet.dropout_max,
          "model.dropout (" + format_number(model.dropout) + ") is above hdet.dropout_max (" + format_number(hdet.dropout_max) + ")");
  require(hdet.mode == HdetMode::shared || diagnostics.pairwise == Pairwise::off,
          "diagnostics.pairwise=" + diagnostics.pairwise.text() + " measures the gradient all-reduce, which hdet.mode=local does not do");
}

void TrainConfig::validate_world(int64_t workers) const {
  const int64_t per_rank = replicas_per_rank();
  require(train.batch % (workers * per_rank * train.accumulation) == 0,
          "train.batch (" + std::to_string(train.batch) + ") must be a multiple of workers (" + std::to_string(workers) +
              ") x replicas per worker (" + std::to_string(per_rank) + ") x train.accumulation (" +
              std::to_string(train.accumulation) + ")");
  desynced_ranks(workers * per_rank);
}

namespace {

bool valid_name(const std::string& name) {
  return !name.empty() &&
         name.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string::npos;
}

}  // namespace

std::string TrainConfig::placed_in_config_file(const std::string& message) const {
  const auto lines = ini_lines_of_keys_named(config_text, message, keys_from_config_file);
  if (lines.empty()) return message;
  return "config file " + ini_place(config_file, lines) + ": " + message;
}

schedules::Schedule TrainConfig::learning_rate_schedule() const {
  const auto lr = schedules::parse_schedule(schedule, train.steps);
  schedules::require_usable_rates(lr, train.steps);
  return lr;
}

void TrainConfig::check_data_files() const {
  for (const auto& source : data_sources()) ByteCorpus::check(source.path, data.heldout, model.context);
  for (const auto& set : eval_sets())
    if (!set.path.empty()) ByteCorpus::check(set.path, data.heldout, model.context);
}

std::vector<DataSource> TrainConfig::data_sources() const {
  if (data.sources.empty()) return {{"heldout", data.path}};
  std::vector<DataSource> sources;
  const auto entries = named_paths("data.sources", data.sources);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& entry = entries[i];
    DataSource source{entry.name, entry.path.value_or("")};
    if (!entry.path || !valid_name(source.name) || source.path.empty())
      throw std::invalid_argument("data.sources entry " + std::to_string(i + 1) + " ('" + entry.text +
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

namespace {
// With a mixture, 'heldout' stands for every source's held-out tail under the source's name, which a user who
// also lists a source by name cannot guess from "named twice"; a name simply given twice needs no such word.
std::string repeated_eval_set(const std::string& name, bool one_from_heldout, const std::string& sources) {
  std::string message = "eval.sets names '" + name + "' twice";
  if (one_from_heldout)
    message += " ('heldout' with data.sources already evaluates each source's held-out tail under its name: " +
               sources + ")";
  return message;
}
}  // namespace

std::vector<EvalSet> TrainConfig::eval_sets() const {
  std::vector<EvalSet> sets;
  std::vector<bool> from_heldout;  // per set: one of the sources a mixture's 'heldout' stands for
  const auto entries = named_paths("eval.sets", eval.sets);
  for (size_t i = 0; i < entries.size(); ++i) {
    const auto& written = entries[i];
    EvalSet set{written.name, written.path.value_or("")};
    if (!valid_name(set.name) || (written.path && set.path.empty()))
      throw std::invalid_argument("eval.sets entry " + std::to_string(i + 1) + " ('" + written.text +
                                  "') must be NAME or NAME=PATH with NAME of letters, digits, _ and -");
    if (set.path.empty() && set.name != "heldout")
      throw std::invalid_argument("eval.sets entry '" + written.text + "' names no file (only 'heldout' may stand alone)");
    const bool mixture_heldout = set.name == "heldout" && set.path.empty() && !data.sources.empty();
    std::vector<EvalSet> expanded;
    if (mixture_heldout)
      for (const auto& source : data_sources()) expanded.push_back({source.name, source.path});
    else
      expanded.push_back(set);
    for (const auto& entry : expanded) {
      for (size_t j = 0; j < sets.size(); ++j)
        if (sets[j].name == entry.name)
          throw std::invalid_argument(repeated_eval_set(entry.name, mixture_heldout || from_heldout[j], data.sources));
      sets.push_back(entry);
      from_heldout.push_back(mixture_heldout);
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

namespace {

// Boost's "unrecognised option" with the key the typo most likely meant: --train.stepz, or [trian] steps in a file.
std::string unknown_option_message(const po::unknown_option& e, const po::options_description& known, bool in_file) {
  const std::string what = text_for_message(e.what(), kQuotedLineLimit);
  if (in_file) return what + ini_did_you_mean(options::unknown_option_name(e), options::long_option_names(known));
  return what + options::did_you_mean_option(e, known);
}

}  // namespace

bool parse_train_config(const std::vector<std::string>& args, TrainConfig& c, std::string& help) {
  const TrainConfig defaults;
  po::options_description keys("configuration keys (INI [section] key = value, or --section.key=value)");
  for (const auto& key : train_config_schema())
    keys.add_options()(key.name.c_str(), po::value<std::string>()->default_value(key.get(c), key.get(defaults))->implicit_value(""),
                       key.help.c_str());
  po::options_description command("options");
  std::string config_path;
  command.add_options()("help,h", "show this help")("config,c", po::value(&config_path), "INI configuration file")(
      "out,o", po::value(&c.out)->default_value(c.out), "run directory: log.h5 and checkpoints/")(
      "resume", po::value(&c.resume), "auto (newest checkpoint in the run directory) or a checkpoint file")(
      "init-from", po::value(&c.init_from), "start from this checkpoint's weights (new optimizer, step 0)")(
      "branch-from", po::value(&c.branch_from), "continue this checkpoint (weights, optimizer, step) under this run's schedule")(
      "nproc", options::whole_number(&c.nproc), "start N local data-parallel workers (Gloo)")(
      "overwrite", po::bool_switch(&c.overwrite), "move a run directory holding an earlier run aside (DIR.old-<time>) and start afresh");
  po::options_description all;
  all.add(command).add(keys);

  for (const auto& a : args) c.command_line += (c.command_line.empty() ? "" : " ") + a;
  po::variables_map vm;
  std::string config_path_read;  // where the values not on the command line came from
  std::set<std::string> on_command_line;
  try {
    // Boost refuses "--key=" (an empty value); "--key" alone takes the implicit empty value.
    std::vector<std::string> tokens = args;
    for (auto& t : tokens)
      if (t.size() > 3 && t.compare(0, 2, "--") == 0 && t.back() == '=') t.pop_back();
    const auto parsed = po::command_line_parser(tokens).options(all).run();
    if (const auto stray = stray_argument_message(parsed, "train", "a config file is --config FILE"); !stray.empty())
      throw std::invalid_argument(stray);
    po::store(parsed, vm);
    for (const auto& key : train_config_schema())
      if (!vm[key.name].defaulted()) on_command_line.insert(key.name);
    if (vm.count("help")) {
      std::ostringstream text;
      text << "usage: lrkit train [--config FILE] [--out DIR] [--section.key=value ...]\n\n" << command << "\n" << keys;
      help = text.str();
      return false;
    }
    if (vm.count("config")) {
      const std::string file = vm["config"].as<std::string>();
      c.config_text = read_ini_text(file, "config file");
      std::istringstream parse_from(ini_text_for_parsing(c.config_text));
      try {
        po::store(po::parse_config_file(parse_from, keys), vm);  // command-line values stored first win
      } catch (const po::unknown_option& e) {
        throw std::invalid_argument("config file " + ini_place(file, ini_line_of_key(c.config_text, e.get_option_name())) +
                                    ": " + unknown_option_message(e, keys, true));
      } catch (const po::multiple_occurrences& e) {
        throw std::invalid_argument("config file " + ini_place(file, ini_line_of_key(c.config_text, e.get_option_name(), 2)) +
                                    ": " + e.what());
      } catch (const po::invalid_config_file_syntax& e) {
        throw std::invalid_argument("config file " + ini_place(file, ini_line_of_text(c.config_text, e.tokens())) + ": " +
                                    text_for_message(e.what(), kQuotedLineLimit));
      } catch (const po::error& e) {
        throw std::invalid_argument("config file '" + file + "': " + e.what());
      }
      config_path_read = file;
    }
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    throw std::invalid_argument(unknown_option_message(e, all, false));
  } catch (const po::error& e) {
    throw std::invalid_argument(e.what());
  }
  c.config_file = config_path_read;
  c.keys_from_config_file.clear();
  for (const auto& key : train_config_schema())
    if (!config_path_read.empty() && !vm[key.name].defaulted() && !on_command_line.count(key.name))
      c.keys_from_config_file.push_back(key.name);
  for (const auto& key : train_config_schema()) {
    if (vm[key.name].defaulted()) continue;
    try {
      key.set(c, vm[key.name].as<std::string>());
    } catch (const std::invalid_argument& e) {
      if (on_command_line.count(key.name)) throw;  // a value given on the command line is the command line's
      throw std::invalid_argument(c.placed_in_config_file(e.what()));
    }
  }
  try {
    c.validate();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(c.placed_in_config_file(e.what()));
  }
  return true;
}

}  // namespace lrkit::train
