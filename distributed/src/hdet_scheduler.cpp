#include "lrkit/distributed/hdet_scheduler.hpp"

#include <stdexcept>
#include <string>

#include "lrkit/distributed/gradient_sync.hpp"
#include "lrkit/distributed/rate_ratios.hpp"

namespace lrkit::distributed {

namespace {
constexpr double kBucketMb = 25.0;  // parameter averaging, flattened like the gradient all-reduce
constexpr const char* kWho = "HdetScheduler";
}  // namespace

HdetScheduler::HdetScheduler(const controllers::HdetConfig& config, schedules::Schedule base,
                             torch::optim::Optimizer& optimizer, std::vector<torch::Tensor> parameters,
                             Collective& collective, std::vector<double> ratios)
    : ensemble_({{"lr", config}}, collective, 1), base_(std::move(base)), optimizer_(optimizer),
      ratios_(ratios.empty() ? rate_ratios(optimizer, kWho) : checked_ratios(optimizer, ratios, kWho)),
      ratios_read_from_zero_rates_(ratios.empty() && !rates_hold_ratios(optimizer)),
      parameters_(std::move(parameters)), collective_(collective) {
  apply();
}

void HdetScheduler::step(double local_loss) { step(torch::tensor({local_loss}, torch::kDouble)); }

void HdetScheduler::step(const torch::Tensor& local_loss) {
  if (local_loss.numel() != 1)
    throw std::invalid_argument("HdetScheduler::step: the loss must be one number (got a tensor of " +
                                std::to_string(local_loss.numel()) + " elements; reduce it first, e.g. .mean())");
  const auto mine = local_loss.detach().reshape({1}).to(collective_.device(), torch::kDouble);
  pending_.push_back(collective_.all_gather(mine).reshape({-1}));
  // Between syncs the rates depend on the step alone (the window's losses wait), so only a sync copies them.
  if (ensemble_.sync_due_after(static_cast<int64_t>(pending_.size()))) {
    observe_pending();
    // Converge: every replica's parameters become their mean. Optimizer state is not averaged.
    average_replicas({parameters_}, collective_, kBucketMb);
    ensemble_.sync({base_(ensemble_.state(0).step - 1)});  // the scheduled rate of the window's last step
  }
  apply();
}

void HdetScheduler::observe_pending() {
  if (pending_.empty()) return;
  const auto rows = torch::stack(pending_).to(torch::kCPU).contiguous();  // one copy to the host
  pending_.clear();
  const auto world = rows.size(1);
  for (int64_t k = 0; k < rows.size(0); ++k) {
    const double* losses = rows.data_ptr<double>() + k * world;
    ensemble_.observe(std::vector<double>(losses, losses + world));
  }
}

const controllers::HdetState& HdetScheduler::state() {
  observe_pending();
  return ensemble_.state(0);
}

int64_t HdetScheduler::next_step() const { return ensemble_.state(0).step + static_cast<int64_t>(pending_.size()); }

double HdetScheduler::base_lr() const { return ensemble_.base(0, base_(next_step())); }

double HdetScheduler::lr() const { return ensemble_.value(0, collective_.rank(), base_(next_step())); }

void HdetScheduler::restore(const controllers::HdetState& state) {
  if (ratios_read_from_zero_rates_ && state.step > 0) throw std::invalid_argument(no_ratios_to_resume(optimizer_, state.step, kWho));
  pending_.clear();  // the old trajectory's
  ensemble_.restore({state});
  apply();
}

void HdetScheduler::apply() { set_learning_rates(optimizer_, lr(), ratios_, kWho); }

}  // namespace lrkit::distributed
