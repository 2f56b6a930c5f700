// The drop-in HDET scheduler over an in-process group of 4 ranks on a small
// regression problem with a shared (all-reduced) gradient.
#include "lrkit/distributed/hdet_scheduler.hpp"

#include <gtest/gtest.h>


#include "lrkit/schedules/factory.hpp"
#include "thread_ranks.hpp"

namespace lrkit::distributed {
namespace {

struct RankTrace {
  std::vector<double> lr, base;  // per step
  std::vector<torch::Tensor> weights;           // per step, after the scheduler's step
};

// Each rank fits y = x . w_true on its own samples with SGD; gradients are all-reduced.
std::vector<RankTrace> train(const controllers::HdetConfig& config, int steps) {
  return lrkit::testing::on_thread_ranks<RankTrace>(4, [&](size_t rank, Collective& group) {
    RankTrace trace;
    auto w = torch::zeros({8}, torch::kDouble).set_requires_grad(true);
    torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.0));
    HdetScheduler hdet(config, schedules::parse_schedule("cosine(peak=0.05)", steps), sgd, {w}, group);
    auto generator = at::make_generator<at::CPUGeneratorImpl>(100 + static_cast<uint64_t>(rank));
    const auto w_true = torch::linspace(-1, 1, 8, torch::kDouble);
    for (int step = 0; step < steps; ++step) {
      trace.lr.push_back(hdet.lr());
      trace.base.push_back(hdet.base_lr());
      const auto x = torch::randn({16, 8}, generator, torch::kDouble);
      sgd.zero_grad();
      const auto loss = (x.matmul(w) - x.matmul(w_true)).pow(2).mean();
      loss.backward();
      auto g = w.grad();
      group.all_reduce_sum(g);
      g.div_(4);
      sgd.step();
      hdet.step(loss.item<double>());
      trace.weights.push_back(w.detach().clone());
    }
    return trace;
  });
}

TEST(HdetScheduler, AlphaZeroIsPlainDataParallel) {
  controllers::HdetConfig c;
  c.replicas = 4;
  c.alpha = 0.0;
  c.sync_every = 5;
  const auto traces = train(c, 40);
  const auto schedule = schedules::parse_schedule("cosine(peak=0.05)", 40);
  for (const auto& t : traces)
    for (int step = 0; step < 40; ++step) {
      EXPECT_EQ(t.lr[static_cast<size_t>(step)], schedule(step));
      EXPECT_TRUE(torch::equal(t.weights[static_cast<size_t>(step)], traces[0].weights[static_cast<size_t>(step)]));
    }
}

TEST(HdetScheduler, ReplicasSpreadBetweenSyncsAndAgreeAfterEach) {
  controllers::HdetConfig c;
  c.replicas = 4;
  c.alpha = 0.25;
  c.sync_every = 5;
  c.sigma = 0.01;
  const auto traces = train(c, 40);
  for (int step = 0; step < 40; ++step) {
    const auto s = static_cast<size_t>(step);
    double mean_lr = 0;
    for (const auto& t : traces) mean_lr += t.lr[s] / 4;
    EXPECT_NEAR(mean_lr, traces[0].base[s], 1e-15) << "the spread has mean 1 at step " << step;
    EXPECT_NE(traces[0].lr[s], traces[1].lr[s]);
    const bool synced = (step + 1) % 5 == 0;
    for (const auto& t : traces) {
      EXPECT_EQ(t.base[s], traces[0].base[s]);
      if (synced) {
        EXPECT_TRUE(torch::equal(t.weights[s], traces[0].weights[s])) << "after the sync at step " << step + 1;
      }
    }
    if (!synced && step % 5 != 0) {
      EXPECT_FALSE(torch::equal(traces[1].weights[s], traces[2].weights[s])) << step;
    }
  }
}

}  // namespace
}  // namespace lrkit::distributed
