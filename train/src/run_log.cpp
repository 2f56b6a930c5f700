#include "lrkit/train/run_log.hpp"

#include <chrono>
#include <ctime>
#include <algorithm>
#include <filesystem>

#include "lrkit/h5/file.hpp"

namespace lrkit::train {

namespace {

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return buf;
}

const char* const kStepColumns[] = {"step", "lr", "loss", "grad_norm", "grad_norm_l1", "tokens", "wall_s"};

}  // namespace

RunLog::RunLog(const TrainConfig& c, int64_t world_size, int64_t resume_step) : flush_every_(c.log.flush_every) {
  std::error_code ec;
  std::filesystem::create_directories(c.out, ec);
  if (ec) throw h5::Error("cannot create run directory '" + c.out + "': " + ec.message());
  std::vector<h5::SeriesLog::Column> columns;
  for (const char* name : kStepColumns) columns.push_back({std::string("/train/") + name, 1});
  columns.push_back({"/ranks/loss", world_size, true});
  columns.push_back({"/ranks/grad_norm", world_size, true});
  columns.push_back({"/eval/heldout/step", 1});
  columns.push_back({"/eval/heldout/loss", 1});
  const std::vector<h5::SeriesLog::Attribute> attributes = {
      {"/", "lrkit_version", LRKIT_VERSION},
      {"/", "created_utc", utc_now()},
      {"/", "command_line", c.command_line},
      {"/", "config", c.config_text},
      {"/", "world_size", std::to_string(world_size)},
      {"/", "schedule_spec", c.schedule},
      {"/", "data_path", c.data.path},
  };
  const std::string path = (std::filesystem::path(c.out) / "log.h5").string();
  if (resume_step == 0) {
    log_ = std::make_unique<h5::SeriesLog>(path, columns, attributes);
    return;
  }
  // One /train row per completed step; eval rows up to and including the resume step.
  h5::SeriesLog::Continue keep;
  for (const char* name : kStepColumns) keep.keep_rows[std::string("/train/") + name] = resume_step;
  keep.keep_rows["/ranks/loss"] = keep.keep_rows["/ranks/grad_norm"] = resume_step;
  const auto eval_steps = h5::read_series(path, "/eval/heldout/step");
  const auto kept_evals = std::count_if(eval_steps.begin(), eval_steps.end(),
                                        [&](double s) { return s <= static_cast<double>(resume_step); });
  keep.keep_rows["/eval/heldout/step"] = keep.keep_rows["/eval/heldout/loss"] = kept_evals;
  log_ = std::make_unique<h5::SeriesLog>(path, columns, keep);
}

void RunLog::record(const StepRecord& r) {
  const double values[] = {static_cast<double>(r.step), r.lr, r.loss, r.grad_norm, r.grad_norm_l1, r.tokens, r.wall_s};
  for (size_t i = 0; i < std::size(values); ++i) log_->append(std::string("/train/") + kStepColumns[i], values[i]);
  log_->append("/ranks/loss", r.rank_loss);
  log_->append("/ranks/grad_norm", r.rank_grad_norm);
  if (++since_flush_ >= flush_every_) {
    log_->flush();
    since_flush_ = 0;
  }
}

void RunLog::record_eval(const std::string& set, int64_t step, double loss) {
  log_->append("/eval/" + set + "/step", static_cast<double>(step));
  log_->append("/eval/" + set + "/loss", loss);
}

}  // namespace lrkit::train
