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
  std::vector<controllers::HdetState> states;   // per step, read after the scheduler's step, where asked for
};

// How a loop hands its loss over: the tensor (the gathered losses wait until a sync), the tensor with the state read
// after every step (which hands them over every step), or a number the loop copied to the host itself.
enum class LossHandOver { tensor, tensor_and_state_every_step, number };

// Each rank fits y = x . w_true on its own samples with SGD; gradients are all-reduced.
std::vector<RankTrace> train(const controllers::HdetConfig& config, int steps, LossHandOver hand_over = LossHandOver::tensor) {
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
      if (hand_over == LossHandOver::number) {
        hdet.step(loss.item<double>());
      } else {
        hdet.step(loss);
      }
      if (hand_over == LossHandOver::tensor_and_state_every_step) trace.states.push_back(hdet.state());
      trace.weights.push_back(w.detach().clone());
    }
    return trace;
  });
}

// Four ranks that spread their rates by alpha = 0.25 and sync every 5 steps.
controllers::HdetConfig spread_config() {
  controllers::HdetConfig c;
  c.replicas = 4;
  c.alpha = 0.25;
  c.sync_every = 5;
  c.sigma = 0.01;
  return c;
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
  const auto traces = train(spread_config(), 40);
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

TEST(HdetScheduler, LossesHandedOverAtSyncsOnlyGiveTheSameRunAsEveryStep) {
  const auto late = train(spread_config(), 23);
  const auto every_step = train(spread_config(), 23, LossHandOver::tensor_and_state_every_step);
  const auto numbers = train(spread_config(), 23, LossHandOver::number);
  for (size_t r = 0; r < 4; ++r) {
    EXPECT_EQ(late[r].lr, every_step[r].lr) << r;
    EXPECT_EQ(late[r].base, every_step[r].base) << r;
    EXPECT_EQ(late[r].lr, numbers[r].lr) << r;
    for (size_t s = 0; s < 23; ++s) EXPECT_TRUE(torch::equal(late[r].weights[s], every_step[r].weights[s])) << r << " " << s;
    EXPECT_EQ(every_step[r].states.back().step, 23);
    EXPECT_EQ(every_step[r].states.back().syncs, 4);
    EXPECT_EQ(every_step[r].states.back().window_steps, 3);
    EXPECT_NE(every_step[r].states.back().scale, 1.0) << "auto-LR moved the base rate";
  }
}

// Every group got one rate: a loop's lower rate for its embeddings, or a frozen group, was lost without a word.
TEST(HdetScheduler, EachGroupKeepsItsProportionAndAFrozenGroupStaysFrozen) {
  lrkit::testing::on_thread_ranks<int>(2, [&](size_t, Collective& group) {
    controllers::HdetConfig c;
    c.replicas = 2;
    c.alpha = 0.5;
    c.sync_every = 2;
    auto frozen = torch::ones({2}, torch::kDouble), body = torch::ones({2}, torch::kDouble),
         embedding = torch::ones({2}, torch::kDouble);
    torch::optim::SGD sgd({torch::optim::OptimizerParamGroup({frozen}, std::make_unique<torch::optim::SGDOptions>(0.0)),
                           torch::optim::OptimizerParamGroup({body}, std::make_unique<torch::optim::SGDOptions>(0.1)),
                           torch::optim::OptimizerParamGroup({embedding}, std::make_unique<torch::optim::SGDOptions>(0.025))},
                          torch::optim::SGDOptions(0.1));
    HdetScheduler hdet(c, schedules::parse_schedule("cosine(peak=0.1)", 10), sgd, {body}, group);
    const auto lr = [&](size_t g) { return sgd.param_groups().at(g).options().get_lr(); };
    for (int step = 0; step < 5; ++step) {
      EXPECT_EQ(lr(0), 0.0) << step;
      EXPECT_EQ(lr(1), hdet.lr()) << step;
      EXPECT_EQ(lr(2), hdet.lr() * 0.25) << step;
      hdet.step(1.0 + step);
    }
    EXPECT_GT(hdet.lr(), 0.0);
    sgd.add_param_group(torch::optim::OptimizerParamGroup({torch::ones({1})}, std::make_unique<torch::optim::SGDOptions>(1.0)));
    try {
      hdet.step(1.0);
      ADD_FAILURE() << "a fourth group took a rate";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "HdetScheduler: the optimizer has 4 parameter groups but had 3 when the scheduler was made; "
                             "make the scheduler after adding every group");
    }
    return 0;
  });
}

// A resume where every group's rate is 0 (the schedule's rate there) cannot read the groups' proportions from them.
TEST(HdetScheduler, AResumeWhereEveryGroupIsAtZeroTakesTheSavedRatios) {
  lrkit::testing::on_thread_ranks<int>(1, [&](size_t, Collective& group) {
    controllers::HdetConfig c;
    c.replicas = 1;
    auto a = torch::ones({2}, torch::kDouble), b = torch::ones({2}, torch::kDouble);
    const auto optimizer = [&] {
      return torch::optim::SGD({torch::optim::OptimizerParamGroup({a}, std::make_unique<torch::optim::SGDOptions>(0.0)),
                                torch::optim::OptimizerParamGroup({b}, std::make_unique<torch::optim::SGDOptions>(0.0))},
                               torch::optim::SGDOptions(0.0));
    };
    const auto schedule = schedules::parse_schedule("constant(peak=0.1)", 10);
    auto before = optimizer();
    HdetScheduler first(c, schedule, before, {a}, group, {1.0, 0.5});
    EXPECT_EQ(first.ratios(), (std::vector<double>{1.0, 0.5}));
    EXPECT_EQ(before.param_groups()[1].options().get_lr(), 0.05);
    first.step(1.0);
    const auto saved = first.state();
    auto restored = optimizer();  // every group at 0, as a checkpoint taken where the rate is 0 holds them
    HdetScheduler unknown(c, schedule, restored, {a}, group);
    try {
      unknown.restore(saved);
      ADD_FAILURE() << "ratios read from zero rates";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("HdetScheduler: every one of the optimizer's 2 parameter groups is at rate 0 "
                                           "at update 1"), std::string::npos) << e.what();
    }
    HdetScheduler resumed(c, schedule, restored, {a}, group, first.ratios());
    resumed.restore(saved);
    EXPECT_EQ(restored.param_groups()[1].options().get_lr(), resumed.lr() * 0.5);
    return 0;
  });
}

TEST(HdetScheduler, ALossOfSeveralNumbersIsRefusedByName) {
  lrkit::testing::on_thread_ranks<int>(1, [&](size_t, Collective& group) {
    controllers::HdetConfig c;
    c.replicas = 1;
    auto w = torch::zeros({2}, torch::kDouble).set_requires_grad(true);
    torch::optim::SGD sgd({w}, torch::optim::SGDOptions(0.0));
    HdetScheduler hdet(c, schedules::parse_schedule("constant(peak=0.1)", 10), sgd, {w}, group);
    try {
      hdet.step(torch::ones({3}));
      ADD_FAILURE() << "taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_STREQ(e.what(), "HdetScheduler::step: the loss must be one number (got a tensor of 3 elements; reduce it "
                             "first, e.g. .mean())");
    }
    return 0;
  });
}

}  // namespace
}  // namespace lrkit::distributed
