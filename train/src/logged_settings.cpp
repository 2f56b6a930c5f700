#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/train_config.hpp"
#include "file_contents.hpp"
#include "settings_checks.hpp"

namespace lrkit::train {

namespace {

// What makes a run the run it is: the model, the data it samples, the optimizer, the batch and seeds, the
// controllers, and what the log records per step. A resume may change how the run is carried out (device,
// threads, accumulation, backend, bucket size, timeouts), how often it logs, evaluates or checkpoints, its
// non-finite policy, the data files' paths (a corpus moved) and train.steps (its own check, on the schedule).
bool defines_the_run(const std::string& key) {
  static const std::vector<std::string> sections = {"model.", "data.", "optim.", "hdet.", "reweight.", "diagnostics."};
  static const std::vector<std::string> keys = {"train.batch",       "train.seed",         "train.precision",
                                                "dist.data_split",   "dist.dropout_seed",  "dist.desync_ranks",
                                                "eval.sets"};
  static const std::vector<std::string> free = {"model.attention",         "model.fused_norm", "data.path",
                                                "reweight.histogram_every", "diagnostics.matrix_every"};
  if (std::find(free.begin(), free.end(), key) != free.end()) return false;
  if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
  return std::any_of(sections.begin(), sections.end(), [&](const std::string& s) { return key.rfind(s, 0) == 0; });
}

// Not the backend, bucket size, accumulation, device or precision, which a resume may change too: they change the
// order of the sums, so a run goes on otherwise than it would have (a sweep's results are bit for bit those of one
// sweep run at once).
const std::vector<std::string> kResultFree = {
    "train.log_every",      "train.threads",           "train.peak_tflops",       "train.profile_from",
    "train.profile_steps",  "checkpoint.every",        "checkpoint.keep",         "log.flush_every",
    "eval.every",           "dist.timeout_s",          "dist.rank0_timeout_s",    "diagnostics.matrix_every",
    "reweight.histogram_every"};

// The NAME=PATH lists (data.sources, eval.sets) compare by their entries' names: a moved file keeps its name.
template <typename Entries>
std::string names_of(const Entries& entries) {
  std::string names;
  for (const auto& entry : entries) names += (names.empty() ? "" : ", ") + entry.name;
  return names;
}

}  // namespace

bool changes_no_result(const std::string& key) {
  return std::find(kResultFree.begin(), kResultFree.end(), key) != kResultFree.end();
}

std::vector<std::pair<std::string, std::string>> compared_values(const TrainConfig& config) {
  auto values = config_values(config);
  for (auto& [key, value] : values) {
    if (key == "data.sources") value = names_of(config.data_sources());
    if (key == "eval.sets") value = names_of(config.eval_sets());
  }
  return values;
}

std::vector<std::string> settings_other_than_logged(const TrainConfig& c, int64_t world_size,
                                                    const std::vector<std::string>& also_compared) {
  const std::string log = run_log_path(c.out);
  std::error_code ec;
  if (!std::filesystem::exists(log, ec)) return {};
  std::map<std::string, std::string> before;  // the logged run's values, as compared
  std::map<std::string, std::string> files_before;  // its files' contents (none in a log written before they were)
  std::string logged_world;
  try {
    std::vector<std::string> args;
    for (const auto& [key, value] : h5::read_string_attributes(log, "/config")) args.push_back("--" + key + "=" + value);
    TrainConfig logged;
    std::string help;
    parse_train_config(args, logged, help);
    for (const auto& [key, value] : compared_values(logged)) before[key] = value;
    const auto root = h5::read_string_attributes(log, "/");
    if (const auto it = root.find("world_size"); it != root.end()) logged_world = it->second;
  } catch (const std::exception&) {
    return {};  // a log lrkit cannot read back (damaged, or from an older lrkit): the resume's own checks see to it
  }
  try {
    files_before = h5::read_string_attributes(log, "/files");
  } catch (const h5::Error&) {
  }
  std::vector<std::string> changed;
  // The log's per-rank series (/ranks/*) are as wide as the run's workers.
  if (!logged_world.empty() && logged_world != std::to_string(world_size))
    changed.push_back("workers = " + logged_world + " there, " + std::to_string(world_size) + " here");
  for (const auto& [key, now] : compared_values(c)) {
    const auto was = before.find(key);
    const bool compared = defines_the_run(key) ||
                          std::find(also_compared.begin(), also_compared.end(), key) != also_compared.end();
    if (was == before.end() || !compared) continue;
    const std::string& then = was->second;
    if (then != now) changed.push_back(key + " = " + (then.empty() ? "''" : then) + " there, " + (now.empty() ? "''" : now) + " here");
  }
  // A file rewritten in place (or another one moved to the path) keeps every setting: its contents tell.
  for (const auto& [name, path] : run_files_read(c)) {
    const auto was = files_before.find(name);
    const auto now = file_contents(path);
    if (was != files_before.end() && now && *now != was->second)
      changed.push_back("the contents of " + name + " ('" + path + "') = " + was->second + " there, " + *now + " here");
  }
  return changed;
}

void require_the_logged_settings(const TrainConfig& c, int64_t world_size) {
  const auto changed = settings_other_than_logged(c, world_size);
  if (changed.empty()) return;
  std::string list;
  for (const auto& line : changed) list += (list.empty() ? "" : "; ") + line;
  throw std::invalid_argument("run directory '" + c.out + "' holds a run with other settings: " + list +
                              " (a resume continues the run as it was; --branch-from CHECKPOINT --out NEW_DIR continues "
                              "its checkpoint under new settings)");
}

}  // namespace lrkit::train
