// Links lrkit::distributed from an install: the drop-in HDET scheduler over an
// in-process group of two ranks. Prints both ranks' rates before the first
// sync (spread around the base) and whether their weights agree after it.
#include <torch/torch.h>

#include <iostream>
#include <thread>
#include <vector>

#include "lrkit/distributed/collective.hpp"
#include "lrkit/distributed/hdet_scheduler.hpp"
#include "lrkit/schedules/factory.hpp"

int main() {
  lrkit::controllers::HdetConfig config;
  config.replicas = 2;
  config.alpha = 0.5;
  config.sync_every = 2;
  auto group = lrkit::distributed::make_thread_group(2);
  std::vector<double> rates(2);
  std::vector<torch::Tensor> weights(2);
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 2; ++rank)
    ranks.emplace_back([&, rank] {
      auto w = torch::full({4}, 1.0, torch::kDouble).set_requires_grad(true);
      torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.0));
      lrkit::distributed::HdetScheduler hdet(config, lrkit::schedules::parse_schedule("constant(peak=0.1)", 10), sgd, {w},
                                             *group[static_cast<size_t>(rank)]);
      rates[static_cast<size_t>(rank)] = hdet.lr();
      for (int step = 0; step < 2; ++step) {
        sgd.zero_grad();
        const auto loss = w.pow(2).sum();
        loss.backward();
        sgd.step();  // each rank at its own rate: the weights drift apart until the sync
        hdet.step(loss.item<double>());
      }
      weights[static_cast<size_t>(rank)] = w.detach().clone();
    });
  for (auto& r : ranks) r.join();
  std::cout << rates[0] + rates[1] << " " << (rates[0] != rates[1] ? "spread" : "equal") << " "
            << (torch::equal(weights[0], weights[1]) ? "averaged" : "apart") << "\n";
  return 0;
}
