// ScheduleLR, an lrkit schedule as a LibTorch LRScheduler: update i runs at schedule(i) exactly in every group
// (scaled by the group's initial ratio), a resume starts where it left off, and LibTorch's own StepLR is shown
// to run one update behind PyTorch's convention, which ScheduleLR follows; a decay branch continues the main run.
#include "lrkit/distributed/schedule_lr.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/factory.hpp"

namespace {

using lrkit::distributed::ScheduleLR;

struct Loop {
  torch::nn::Linear first{4, 3}, second{3, 1};
  torch::optim::AdamW optimizer;
  explicit Loop(double second_lr)
      : optimizer({torch::optim::OptimizerParamGroup(first->parameters()),
                   torch::optim::OptimizerParamGroup(second->parameters(), std::make_unique<torch::optim::AdamWOptions>(second_lr))},
                  torch::optim::AdamWOptions(1.0)) {}
  double lr(size_t group) { return optimizer.param_groups().at(group).options().get_lr(); }
  void update() {
    optimizer.zero_grad();
    second(torch::tanh(first(torch::ones({2, 4})))).sum().backward();
    optimizer.step();
  }
};

TEST(ScheduleLR, UpdateIRunsAtTheScheduleOfIInEveryGroupByItsRatio) {
  const auto schedule = lrkit::schedules::parse_schedule("wsd(peak=3e-3, warmup=3, decay=30%)", 20);
  Loop loop(0.25);  // group 1 starts at a quarter of group 0's rate
  ScheduleLR scheduler(loop.optimizer, schedule);
  EXPECT_EQ(scheduler.ratios(), (std::vector<double>{1.0, 0.25}));
  for (int64_t i = 0; i < 25; ++i) {  // past the end: the end value
    EXPECT_EQ(loop.lr(0), schedule(i)) << i;
    EXPECT_EQ(loop.lr(1), schedule(i) * 0.25) << i;
    EXPECT_EQ(scheduler.step_count(), i);
    loop.update();
    scheduler.step();
  }
}

// A first group built at 0 (frozen) made every ratio 1: the frozen group trained, and the others lost their proportions.
TEST(ScheduleLR, AFrozenFirstGroupStaysFrozenAndTheOthersKeepTheirProportions) {
  const auto schedule = lrkit::schedules::parse_schedule("cosine(peak=1e-2, warmup=2)", 10);
  torch::nn::Linear frozen{2, 2}, body{2, 2}, head{2, 1};
  torch::optim::AdamW optimizer({torch::optim::OptimizerParamGroup(frozen->parameters(), std::make_unique<torch::optim::AdamWOptions>(0.0)),
                                 torch::optim::OptimizerParamGroup(body->parameters(), std::make_unique<torch::optim::AdamWOptions>(2e-3)),
                                 torch::optim::OptimizerParamGroup(head->parameters(), std::make_unique<torch::optim::AdamWOptions>(1e-3))},
                                torch::optim::AdamWOptions(1.0));
  ScheduleLR scheduler(optimizer, schedule);
  EXPECT_EQ(scheduler.ratios(), (std::vector<double>{0.0, 1.0, 0.5}));
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_EQ(optimizer.param_groups()[0].options().get_lr(), 0.0) << i;
    EXPECT_EQ(optimizer.param_groups()[1].options().get_lr(), schedule(i)) << i;
    EXPECT_EQ(optimizer.param_groups()[2].options().get_lr(), schedule(i) * 0.5) << i;
    scheduler.step();
  }
  Loop all_zero(0.0);  // every group at 0: nothing to keep, each follows the schedule
  all_zero.optimizer.param_groups()[0].options().set_lr(0.0);
  EXPECT_EQ(ScheduleLR(all_zero.optimizer, schedule).ratios(), (std::vector<double>{1.0, 1.0}));
}

// A cyclic schedule with floor 0 is at rate 0 at each budget, where a run checkpoints: the restored optimizer's
// groups are all at 0 and hold no ratio. Read from them, every group would have run at one rate after the resume.
TEST(ScheduleLR, AResumeWhereEveryGroupIsAtZeroTakesTheSavedRatios) {
  const auto schedule = lrkit::schedules::parse_schedule("cyclic(budgets=[10, 20], peak=1e-2, rewarm=2, floor=0)", 20);
  Loop whole(0.25), resumed(1.0);
  ScheduleLR a(whole.optimizer, schedule);
  for (int i = 0; i < 10; ++i) a.step();
  ASSERT_EQ(whole.lr(0), 0.0);  // the checkpoint's optimizer: every group at 0
  for (size_t g = 0; g < 2; ++g) resumed.optimizer.param_groups()[g].options().set_lr(whole.lr(g));
  try {
    ScheduleLR(resumed.optimizer, schedule, 10);
    ADD_FAILURE() << "ratios read from zero rates";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ScheduleLR: every one of the optimizer's 2 parameter groups is at rate 0 at update 10 (the "
                           "schedule's rate there), so they hold no proportion to each other: pass the ratios() of the "
                           "scheduler the run had before");
  }
  ScheduleLR b(resumed.optimizer, schedule, 10, a.ratios());
  bool trained = false;
  for (int i = 10; i < 20; ++i) {
    EXPECT_EQ(resumed.lr(0), whole.lr(0)) << i;
    EXPECT_EQ(resumed.lr(1), whole.lr(1)) << i;
    EXPECT_EQ(resumed.lr(1), resumed.lr(0) * 0.25) << i;
    trained |= resumed.lr(1) > 0;
    a.step();
    b.step();
  }
  EXPECT_TRUE(trained);
  EXPECT_THROW(ScheduleLR(resumed.optimizer, schedule, 10, {1.0}), std::invalid_argument);
  try {
    ScheduleLR(resumed.optimizer, schedule, 10, {1.0, NAN});
    ADD_FAILURE() << "a NaN ratio";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ScheduleLR: ratio 1 is nan; a group's ratio is a finite number >= 0");
  }
}

TEST(ScheduleLR, AResumedSchedulerStartsAtItsStep) {
  const auto schedule = lrkit::schedules::parse_schedule("cosine(peak=1e-2, floor=1e-4)", 50);
  Loop whole(1.0), resumed(1.0);
  ScheduleLR a(whole.optimizer, schedule);
  for (int i = 0; i < 17; ++i) a.step();
  ScheduleLR b(resumed.optimizer, schedule, a.step_count());
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(resumed.lr(0), whole.lr(0));
    a.step();
    b.step();
  }
  EXPECT_EQ(b.step_count(), 27);
  EXPECT_THROW(ScheduleLR(resumed.optimizer, schedule, -1), std::invalid_argument);
}

// A decay branch of a budget sweep (decay_branches) continues the main run's optimizer with a scheduler at its fork.
TEST(ScheduleLR, ADecayBranchContinuesTheMainRunAtItsFork) {
  const auto plan = lrkit::schedules::decay_branches("wsd(peak=1e-2, warmup=4, decay=25%, shape=cosine)", {40});
  const auto& branch = plan.branches.front();
  ASSERT_EQ(branch.fork, 31);
  Loop loop(0.5);
  ScheduleLR main(loop.optimizer, plan.main);
  for (int64_t i = 0; i < branch.fork; ++i) {
    loop.update();
    main.step();
  }
  ScheduleLR decay(loop.optimizer, branch.schedule, branch.fork);
  for (int64_t i = branch.fork; i < branch.budget; ++i) {
    EXPECT_EQ(loop.lr(0), branch.schedule(i)) << i;
    EXPECT_EQ(loop.lr(1), branch.schedule(i) * 0.5) << i;
    loop.update();
    decay.step();
  }
}

TEST(ScheduleLR, AGroupAddedAfterItIsNamed) {
  Loop loop(1.0);
  ScheduleLR scheduler(loop.optimizer, lrkit::schedules::parse_schedule("constant(1e-3)", 10));
  torch::nn::Linear extra(2, 2);
  loop.optimizer.add_param_group(torch::optim::OptimizerParamGroup(extra->parameters()));
  try {
    scheduler.step();
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "ScheduleLR: the optimizer has 3 parameter groups but had 2 when the scheduler was made; make "
                           "the scheduler after adding every group");
  }
}

// LibTorch's StepLR leaves its first step() without effect: update i runs at gamma^(i - 1) (update 0 and 1 at the
// initial rate), one behind PyTorch's StepLR (gamma^i), which `step(peak, every=1, gamma)` and ScheduleLR give.
TEST(ScheduleLR, LibTorchsStepLRRunsOneUpdateBehindIt) {
  Loop libtorch(1.0), lrkit_loop(1.0);
  torch::optim::StepLR step_lr(libtorch.optimizer, 1, 0.5);
  ScheduleLR scheduler(lrkit_loop.optimizer, lrkit::schedules::parse_schedule("step(1.0, every=1, gamma=0.5)", 10));
  std::vector<double> theirs, ours;
  for (int i = 0; i < 4; ++i) {
    theirs.push_back(libtorch.lr(0));
    ours.push_back(lrkit_loop.lr(0));
    step_lr.step();
    scheduler.step();
  }
  EXPECT_EQ(theirs, (std::vector<double>{1.0, 1.0, 0.5, 0.25}));
  EXPECT_EQ(ours, (std::vector<double>{1.0, 0.5, 0.25, 0.125}));
}

// cycle_momentum: beta1 (SGD: momentum) follows onecycle's cycle at every update, from construction and through a
// resume, as PyTorch's OneCycleLR sets it; what cannot cycle is refused by name.
TEST(ScheduleLR, CycledMomentumFollowsTheScheduleInEveryGroup) {
  const auto schedule = lrkit::schedules::parse_schedule("onecycle(peak=1e-2)", 20);
  const lrkit::distributed::CycledMomentum range{0.85, 0.95};
  Loop loop(0.25);
  ScheduleLR scheduler(loop.optimizer, schedule, 0, {}, range);
  const auto beta1_of = [](torch::optim::Optimizer& optimizer, size_t group) {
    return std::get<0>(static_cast<torch::optim::AdamWOptions&>(optimizer.param_groups().at(group).options()).betas());
  };
  for (int64_t i = 0; i < 20; ++i) {
    for (size_t g = 0; g < 2; ++g)
      EXPECT_EQ(beta1_of(loop.optimizer, g), *schedule.cycled_momentum(i, 0.85, 0.95)) << "update " << i;
    loop.update();
    scheduler.step();
  }
  Loop resumed(0.25);
  ScheduleLR later(resumed.optimizer, schedule, 7, {}, range);
  EXPECT_EQ(beta1_of(resumed.optimizer, 0), *schedule.cycled_momentum(7, 0.85, 0.95));

  torch::nn::Linear layer{2, 1};
  torch::optim::SGD sgd(layer->parameters(), torch::optim::SGDOptions(1.0).momentum(0.0));
  ScheduleLR sgd_scheduler(sgd, schedule, 0, {}, range);
  sgd_scheduler.step();
  EXPECT_EQ(static_cast<torch::optim::SGDOptions&>(sgd.param_groups()[0].options()).momentum(),
            *schedule.cycled_momentum(1, 0.85, 0.95));

  // Adam's beta1 and RMSprop's momentum cycle too, as PyTorch's schedulers cycle them (beta2 stays).
  torch::optim::Adam adam(layer->parameters(), torch::optim::AdamOptions(1.0).betas({0.9, 0.98}));
  ScheduleLR adam_scheduler(adam, schedule, 0, {}, range);
  adam_scheduler.step();
  const auto adam_betas = static_cast<torch::optim::AdamOptions&>(adam.param_groups()[0].options()).betas();
  EXPECT_EQ(std::get<0>(adam_betas), *schedule.cycled_momentum(1, 0.85, 0.95));
  EXPECT_EQ(std::get<1>(adam_betas), 0.98);
  torch::optim::RMSprop rmsprop(layer->parameters(), torch::optim::RMSpropOptions(1.0));
  ScheduleLR rmsprop_scheduler(rmsprop, schedule, 0, {}, range);
  EXPECT_EQ(static_cast<torch::optim::RMSpropOptions&>(rmsprop.param_groups()[0].options()).momentum(),
            *schedule.cycled_momentum(0, 0.85, 0.95));

  using lrkit::distributed::CycledMomentum;
  const auto refusal = [&](torch::optim::Optimizer& optimizer, const std::string& spec, CycledMomentum m) {
    try {
      ScheduleLR(optimizer, lrkit::schedules::parse_schedule(spec, 20), 0, {}, m);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  EXPECT_EQ(refusal(loop.optimizer, "cosine(peak=1e-2)", range),
            "ScheduleLR: cycle_momentum needs a schedule that cycles the momentum against its rate, onecycle or "
            "triangular (with at most a warmup in front); 'cosine(peak=0.01)' does not");
  EXPECT_EQ(refusal(loop.optimizer, "onecycle(peak=1e-2)", {0.95, 0.85}),
            "ScheduleLR: cycle_momentum goes from base to max with 0 <= base <= max < 1 (got base 0.95, max 0.85)");
  torch::optim::Adagrad adagrad(layer->parameters(), torch::optim::AdagradOptions(1.0));
  EXPECT_EQ(refusal(adagrad, "onecycle(peak=1e-2)", range),
            "ScheduleLR: cycle_momentum sets the beta1 of Adam and AdamW or the momentum of SGD and RMSprop; this "
            "optimizer's groups have neither");
}

}  // namespace
