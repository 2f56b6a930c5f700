#include "lrkit/distributed/hdet_scheduler.hpp"

#include "lrkit/distributed/gradient_sync.hpp"
#include "lrkit/distributed/hyperparameters.hpp"

namespace lrkit::distributed {

namespace {
constexpr double kBucketMb = 25.0;  // parameter averaging, flattened like the gradient all-reduce
}  // namespace

HdetScheduler::HdetScheduler(const controllers::HdetConfig& config, schedules::Schedule base,
                             torch::optim::Optimizer& optimizer, std::vector<torch::Tensor> parameters,
                             Collective& collective)
    : ensemble_({{"lr", config}}, collective, 1), base_(std::move(base)), optimizer_(optimizer),
      parameters_(std::move(parameters)), collective_(collective) {
  apply();
}

void HdetScheduler::step(double local_loss) {
  const auto mine = torch::tensor({local_loss}, torch::kDouble).to(collective_.device());
  const auto losses = collective_.all_gather(mine).reshape({-1}).to(torch::kCPU).contiguous();
  ensemble_.observe(std::vector<double>(losses.data_ptr<double>(), losses.data_ptr<double>() + losses.numel()));
  if (ensemble_.sync_due()) {
    // Converge: every replica's parameters become their mean. Optimizer state is not averaged.
    average_replicas({parameters_}, collective_, kBucketMb);
    ensemble_.sync({base_(state().step - 1)});  // the scheduled rate of the window's last step
  }
  apply();
}

double HdetScheduler::base_lr() const { return ensemble_.base(0, base_(state().step)); }

double HdetScheduler::lr() const { return ensemble_.value(0, collective_.rank(), base_(state().step)); }

void HdetScheduler::restore(const controllers::HdetState& state) {
  ensemble_.restore({state});
  apply();
}

void HdetScheduler::apply() { set_learning_rate(optimizer_, lr()); }

}  // namespace lrkit::distributed
