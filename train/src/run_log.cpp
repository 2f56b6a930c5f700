#include "lrkit/train/run_log.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <functional>
#include <map>

#include "lrkit/common/numbers.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "file_contents.hpp"

namespace lrkit::train {

namespace {

// How many rows of a step column a resume keeps: its leading steps that `keep` takes, while they increase. A full
// disk can leave zero rows past the last flush that reached the disk: a step no larger than the one before ends them.
int64_t leading_steps(const std::vector<double>& steps, const std::function<bool(double)>& keep) {
  int64_t rows = 0;
  for (size_t i = 0; i < steps.size() && keep(steps[i]) && (i == 0 || steps[i] > steps[i - 1]); ++i) ++rows;
  return rows;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

const char* const kStepColumns[] = {"step",   "lr",  "loss",   "grad_norm",   "grad_norm_l1", "tokens",
                                    "wall_s", "mfu", "loss_z", "grad_norm_z", "skipped"};
const char* const kDispersionColumns[] = {"loss_std",      "loss_cv",        "loss_range",
                                          "loss_outlier_rank", "grad_norm_std", "grad_norm_cv",
                                          "inner_pairwise", "inner_pairwise_normalized", "cos_pairwise"};

const char* const kWeightColumns[] = {"entropy", "max_min_ratio", "effective_size"};
const char* const kHdetSpreadColumns[] = {"base", "scale", "delta", "velocity"};

// Series with one row per optimizer step, and series of events at some steps
// (a step column plus value columns), for truncation on resume.
struct Layout {
  std::vector<h5::SeriesLog::Column> per_step;
  std::vector<std::pair<std::string, std::vector<h5::SeriesLog::Column>>> events;  // step column, value columns
};

Layout layout(const TrainConfig& c, int64_t world_size) {
  Layout l;
  for (const char* name : kStepColumns) l.per_step.push_back({std::string("/train/") + name, 1});
  if (c.optim.cycle_momentum) l.per_step.push_back({"/train/momentum", 1});
  l.per_step.push_back({"/ranks/loss", world_size, true});
  l.per_step.push_back({"/ranks/grad_norm", world_size, true});
  if (c.diagnostics.enabled) {
    l.per_step.push_back({"/ranks/cos_to_mean", world_size, true});
    for (const char* name : kDispersionColumns) l.per_step.push_back({std::string("/diagnostics/") + name, 1});
    l.events.push_back({"/diagnostics/cos_matrix_step", {{"/diagnostics/cos_matrix", world_size * world_size, true}}});
  }
  if (c.hdet.enabled) {
    const int64_t replicas = world_size * c.replicas_per_rank();
    l.per_step.push_back({"/hdet/replica_loss", replicas, true});
    l.per_step.push_back({"/hdet/window_loss", replicas, true});
    for (const auto& name : c.hdet_spread()) {
      for (const char* column : kHdetSpreadColumns) l.per_step.push_back({"/hdet/" + name + "/" + column, 1});
      l.per_step.push_back({"/hdet/" + name + "/replica", replicas, true});
    }
  }
  if (!c.data.sources.empty()) {
    const auto sources = static_cast<int64_t>(c.data_sources().size());
    l.per_step.push_back({"/data/temperature", 1});
    l.per_step.push_back({"/data/probability", sources, true});
    l.per_step.push_back({"/data/rows", sources, true});
  }
  if (c.reweight.enabled()) {
    for (const char* name : kWeightColumns) l.per_step.push_back({std::string("/reweight/") + name, 1});
    l.events.push_back({"/reweight/histogram_step", {{"/reweight/histogram", c.reweight.histogram_bins, true}}});
  }
  for (const auto& set : c.eval_sets())
    l.events.push_back({"/eval/" + set.name + "/step", {{"/eval/" + set.name + "/loss", 1}}});
  l.events.push_back({"/checkpoints/step", {{"/checkpoints/crc32", 1}}});
  return l;
}

// How the run began: kept as the first session wrote them.
std::vector<h5::SeriesLog::Attribute> origin(const TrainConfig& c) {
  return {{"/", "created_utc", utc_now()}, {"/", "branched_from", c.branch_from}};
}

// What the run is carried out with: each session writes them, so they describe the newest one (a resume may change
// the keys that do not define the run: threads, accumulation, cadences, a moved corpus, the schedule's untrained rest).
std::vector<h5::SeriesLog::Attribute> settings(const TrainConfig& c, int64_t world_size) {
  std::vector<h5::SeriesLog::Attribute> attributes = {
      {"/", "lrkit_version", LRKIT_VERSION},
      {"/", "command_line", c.command_line},
      {"/", "config", c.config_text},
      {"/", "world_size", std::to_string(world_size)},
      {"/", "schedule_spec", c.schedule},
      {"/", "data_path", c.data.sources.empty() ? c.data.path : c.data.sources},
      {"/", "desync", "data_split=" + c.dist.data_split.text() + " dropout_seed=" + c.dist.dropout_seed.text() +
                          " desync_ranks=" + c.dist.desync_ranks},
  };
  for (const auto& [key, value] : config_values(c)) attributes.push_back({"/config", key, value});
  if (c.diagnostics.enabled) attributes.push_back({"/diagnostics", "cos_pairwise_method", c.diagnostics.pairwise.text()});
  if (!c.data.sources.empty()) {
    std::string names;
    for (const auto& source : c.data_sources()) names += (names.empty() ? "" : ",") + source.name;
    attributes.push_back({"/data", "sources", names});
    attributes.push_back({"/data", "mixing", c.data.mixing.text()});
    attributes.push_back({"/data", "temperature", c.data.temperature});
  }
  if (c.reweight.enabled()) {
    attributes.push_back({"/reweight", "strategy", c.reweight.strategy.text()});
    attributes.push_back({"/reweight", "strength", format_number(c.reweight.strength)});
    attributes.push_back({"/reweight", "warmup", std::to_string(c.reweight.warmup)});
  }
  if (c.hdet.enabled) {
    attributes.push_back({"/hdet", "mode", c.hdet.mode.text()});
    attributes.push_back({"/hdet", "replicas", std::to_string(world_size * c.replicas_per_rank())});
    attributes.push_back({"/hdet", "replicas_per_rank", std::to_string(c.replicas_per_rank())});
    attributes.push_back({"/hdet", "sync_every", std::to_string(c.hdet.controller.sync_every)});
    attributes.push_back({"/hdet", "alpha", format_number(c.hdet.controller.alpha)});
  }
  for (const auto& set : c.eval_sets())
    attributes.push_back({"/eval/" + set.name, "path", set.path.empty() ? c.data.path : set.path});
  // What the files held when this session started; a later resume must find the same (logged_settings.cpp).
  for (const auto& [name, path] : run_files_read(c))
    if (const auto contents = file_contents(path)) attributes.push_back({"/files", name, *contents});
  return attributes;
}

std::vector<h5::SeriesLog::Attribute> start_attributes(const std::string& object, const RunStart& start) {
  return {
      {object, "kind", start.kind},
      {object, "checkpoint", start.checkpoint},
      {object, "checksum", start.checksum},
      {object, "step", std::to_string(start.step)},
      {object, "device", start.device},
      {object, "flops_per_token", format_number(start.flops_per_token)},
      {object, "peak_flops", format_number(start.peak_flops)},
      {object, "threads", start.threads},
  };
}

// The config keys this session changed against the one before (`before`: the log's /config), "; "-separated.
std::string changes_against(const std::map<std::string, std::string>& before, const TrainConfig& c) {
  const auto shown = [](const std::string& value) { return value.empty() ? std::string("''") : value; };
  std::string changed;
  for (const auto& [key, now] : config_values(c)) {
    const auto was = before.find(key);
    const std::string then = was == before.end() ? "(not logged)" : shown(was->second);
    if (was != before.end() && was->second == now) continue;
    changed += (changed.empty() ? "" : "; ") + key + " = " + then + " -> " + shown(now);
  }
  return changed;
}

// /sessions/<index>: this session's start (as /start), when and by what it was started, and what it changed. The
// sessions before it stay: a resume from an earlier checkpoint rewrites the rows from its step on, so a row of step
// s comes from the newest session that started at or before s.
std::vector<h5::SeriesLog::Attribute> session_record(int64_t index, const RunStart& start, const TrainConfig& c,
                                                     const std::string& changed) {
  const std::string object = "/sessions/" + std::to_string(index);
  auto attributes = start_attributes(object, start);
  attributes.push_back({object, "started_utc", utc_now()});
  attributes.push_back({object, "lrkit_version", LRKIT_VERSION});
  attributes.push_back({object, "command_line", c.command_line});
  attributes.push_back({object, "changed", changed});
  return attributes;
}

class Hdf5RunLog final : public RunLog {
 public:
  Hdf5RunLog(const TrainConfig& c, int64_t world_size, const RunStart& start, bool continues);
  void record(const StepRecord& row) override;
  void end_step() override;
  void record_hdet(const HdetRecord& row) override;
  void record_weights(int64_t step, const reweight::WeightStats& stats, const std::vector<double>& histogram) override;
  void record_data(double temperature, const std::vector<double>& probability, const std::vector<double>& rows) override;
  void record_momentum(double momentum) override;
  void record_eval(const std::string& set, int64_t step, double loss) override;
  void record_cos_matrix(int64_t step, const std::vector<double>& matrix) override;
  void record_checkpoint(int64_t step, uint32_t crc32) override;
  void flush() override { log_->flush(); }
  std::string path() const override { return log_->path(); }
  std::string changed_settings() const override { return changed_; }

 private:
  bool diagnostics_;
  std::vector<std::string> hdet_spread_;  // empty: HDET off
  int64_t flush_every_;
  int64_t since_flush_ = 0;
  std::string changed_;
  std::unique_ptr<h5::SeriesLog> log_;
};

Hdf5RunLog::Hdf5RunLog(const TrainConfig& c, int64_t world_size, const RunStart& start, bool continues)
    : diagnostics_(c.diagnostics.enabled),
      hdet_spread_(c.hdet.enabled ? c.hdet_spread() : std::vector<std::string>()),
      flush_every_(c.log.flush_every) {
  std::error_code ec;
  std::filesystem::create_directories(c.out, ec);
  if (ec) throw h5::Error("cannot create run directory '" + c.out + "': " + ec.message());
  const Layout l = layout(c, world_size);
  std::vector<h5::SeriesLog::Column> columns = l.per_step;
  for (const auto& [step_column, values] : l.events) {
    columns.push_back({step_column, 1});
    columns.insert(columns.end(), values.begin(), values.end());
  }
  const std::string path = run_log_path(c.out);
  if (!continues) {
    auto attributes = origin(c);
    for (auto part : {settings(c, world_size), start_attributes("/start", start), session_record(0, start, c, "")})
      attributes.insert(attributes.end(), part.begin(), part.end());
    log_ = std::make_unique<h5::SeriesLog>(path, columns, attributes);
    return;
  }
  const int64_t resume_step = start.step;
  // Per-step rows of the updates before the resume step (a branch's log starts
  // at its fork step); events up to and including the resume step.
  h5::SeriesLog::Continue keep;
  try {
    h5::extend_to_allocated_end(path);  // a full disk ended the run: HDF5 opens its log again (the rows below are kept)
    changed_ = changes_against(h5::read_string_attributes(path, "/config"), c);
    for (auto part : {settings(c, world_size), start_attributes("/start", start),
                      session_record(static_cast<int64_t>(h5::read_numbered_attributes(path, "/sessions").size()), start, c, changed_)})
      keep.attributes.insert(keep.attributes.end(), part.begin(), part.end());
    const auto resume = static_cast<double>(resume_step);
    const auto kept_steps = leading_steps(h5::read_series(path, "/train/step"), [&](double s) { return s < resume; });
    for (const auto& column : l.per_step) keep.keep_rows[column.path] = kept_steps;
    for (const auto& [step_column, values] : l.events) {
      const auto kept = leading_steps(h5::read_series(path, step_column), [&](double s) { return s <= resume; });
      keep.keep_rows[step_column] = kept;
      for (const auto& v : values) keep.keep_rows[v.path] = kept;
    }
    log_ = std::make_unique<h5::SeriesLog>(path, columns, keep);
  } catch (const h5::Error& e) {
    // A log deleted, emptied or overwritten beside its run's checkpoints: say what a resume needs and the way on.
    throw h5::Error("cannot continue the run log at step " + std::to_string(resume_step) + ": " + e.what() +
                    " (a resume continues its run's log; --branch-from " + start.checkpoint +
                    " --out NEW_DIR continues the checkpoint under a new log)");
  }
}

void Hdf5RunLog::record(const StepRecord& r) {
  const double values[] = {static_cast<double>(r.step), r.lr,     r.loss,   r.grad_norm,   r.grad_norm_l1, r.tokens,
                           r.wall_s,                    r.mfu,    r.loss_z, r.grad_norm_z, r.skipped};
  for (size_t i = 0; i < std::size(values); ++i) log_->append(std::string("/train/") + kStepColumns[i], values[i]);
  log_->append("/ranks/loss", r.rank_loss);
  log_->append("/ranks/grad_norm", r.rank_grad_norm);
  if (diagnostics_) {
    if (r.dispersion == nullptr) throw std::logic_error("RunLog::record: diagnostics enabled but no dispersion given");
    const auto& d = *r.dispersion;
    log_->append("/ranks/cos_to_mean", d.cos_to_mean);
    const double metrics[] = {d.loss_std, d.loss_cv, d.loss_range, static_cast<double>(d.loss_outlier_rank),
                              d.grad_norm_std, d.grad_norm_cv, d.inner_pairwise, d.inner_pairwise_normalized,
                              d.cos_pairwise};
    for (size_t i = 0; i < std::size(metrics); ++i)
      log_->append(std::string("/diagnostics/") + kDispersionColumns[i], metrics[i]);
  }
}

void Hdf5RunLog::end_step() {
  if (++since_flush_ >= flush_every_) {
    log_->flush();
    since_flush_ = 0;
  }
}

void Hdf5RunLog::record_hdet(const HdetRecord& r) {
  if (r.spread.size() != hdet_spread_.size())
    throw std::logic_error("RunLog::record_hdet: " + std::to_string(r.spread.size()) + " spread entries for " +
                           std::to_string(hdet_spread_.size()) + " logged");
  log_->append("/hdet/replica_loss", r.replica_loss);
  log_->append("/hdet/window_loss", r.window_loss);
  for (size_t i = 0; i < r.spread.size(); ++i) {
    const auto& s = r.spread[i];
    const std::string group = "/hdet/" + hdet_spread_[i] + "/";
    const double values[] = {s.base, s.scale, s.delta, s.velocity};
    for (size_t k = 0; k < std::size(values); ++k) log_->append(group + kHdetSpreadColumns[k], values[k]);
    log_->append(group + "replica", s.replica);
  }
}

void Hdf5RunLog::record_weights(int64_t step, const reweight::WeightStats& stats, const std::vector<double>& histogram) {
  const double values[] = {stats.entropy, stats.max_min_ratio, stats.effective_size};
  for (size_t i = 0; i < std::size(values); ++i) log_->append(std::string("/reweight/") + kWeightColumns[i], values[i]);
  if (!histogram.empty()) {
    log_->append("/reweight/histogram_step", static_cast<double>(step));
    log_->append("/reweight/histogram", histogram);
  }
}

void Hdf5RunLog::record_data(double temperature, const std::vector<double>& probability, const std::vector<double>& rows) {
  log_->append("/data/temperature", temperature);
  log_->append("/data/probability", probability);
  log_->append("/data/rows", rows);
}

void Hdf5RunLog::record_momentum(double momentum) { log_->append("/train/momentum", momentum); }

void Hdf5RunLog::record_eval(const std::string& set, int64_t step, double loss) {
  log_->append("/eval/" + set + "/step", static_cast<double>(step));
  log_->append("/eval/" + set + "/loss", loss);
}

void Hdf5RunLog::record_cos_matrix(int64_t step, const std::vector<double>& matrix) {
  log_->append("/diagnostics/cos_matrix_step", static_cast<double>(step));
  log_->append("/diagnostics/cos_matrix", matrix);
}

void Hdf5RunLog::record_checkpoint(int64_t step, uint32_t crc32) {
  log_->append("/checkpoints/step", static_cast<double>(step));
  log_->append("/checkpoints/crc32", static_cast<double>(crc32));  // exact: 32 bits fit a double
}

}  // namespace

std::unique_ptr<RunLog> open_run_log(const TrainConfig& config, int64_t world_size, const RunStart& start, bool continues) {
  return std::make_unique<Hdf5RunLog>(config, world_size, start, continues);
}

}  // namespace lrkit::train
