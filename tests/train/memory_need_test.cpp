// The memory a CPU run certainly needs, and the refusal of a run that cannot fit (the check before a run starts;
// the CLI tests compare the estimate with the peak resident memory of real runs).
#include <gtest/gtest.h>

#include <string>

#include "lrkit/train/model_flops.hpp"
#include "lrkit/train/memory_need.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

TEST(MemoryNeed, StateCountsEveryModelCopyAndActivationsOneMicroBatch) {
  TrainConfig c = tiny_config();
  c.model = {256, 64, 2, 4, 128, 0.0};
  c.model.attention = Attention::explicit_;
  c.train.batch = 16;
  const auto p = static_cast<double>(parameter_count(c.model));
  const auto adamw = worker_memory_lower_bound(c, 1);
  EXPECT_EQ(adamw.parameters, parameter_count(c.model));
  EXPECT_DOUBLE_EQ(adamw.state_bytes, p * 16);  // fp32 weights, gradients and two moments
  // Per token: 14 widths per layer plus explicit attention's softmax row (heads x context), then the vocabulary;
  // backward's first tensors: one score row (as many as the vocabulary here).
  EXPECT_DOUBLE_EQ(adamw.activation_bytes, 16.0 * 64 * (2 * (14 * 128 + 4 * 64) + 256 + 4 * 64) * 4);
  EXPECT_DOUBLE_EQ(adamw.gradient_bytes, p * 4);

  TrainConfig sgd = c;
  sgd.optim.name = OptimizerName::sgd;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(sgd, 1).state_bytes, p * 12);
  sgd.optim.momentum = 0;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(sgd, 1).state_bytes, p * 8);
  sgd.optim.cycle_momentum = true;  // a cycled momentum keeps the buffer whatever optim.momentum says
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(sgd, 1).state_bytes, p * 12);
  sgd.optim.base_momentum = sgd.optim.max_momentum = 0;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(sgd, 1).state_bytes, p * 8);

  TrainConfig split = c;  // 2 workers and 2 micro-batches: a quarter of the rows at once
  split.train.accumulation = 2;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(split, 2).activation_bytes, adamw.activation_bytes / 4);
  split.train.precision = Precision::bf16;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(split, 2).activation_bytes, adamw.activation_bytes / 8);
  TrainConfig fused = c;
  fused.model.attention = Attention::fused;
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(fused, 1).activation_bytes, 16.0 * 64 * (2 * 14 * 128 + 256 + 256) * 4);

  TrainConfig hdet = c;  // two replicas in the worker, spread rates: their mean model too
  hdet.hdet.enabled = true;
  hdet.hdet.replicas_per_rank = 2;
  hdet.hdet.controller.alpha = 0.1;
  ASSERT_FALSE(hdet.hdet_replicas_identical());
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(hdet, 1).state_bytes, 2 * p * 16 + p * 4);
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(hdet, 1).activation_bytes, adamw.activation_bytes / 2);
  EXPECT_DOUBLE_EQ(worker_memory_lower_bound(hdet, 1).gradient_bytes, 2 * p * 4);
}

// LibTorch 2's zero_grad frees the gradients, so the activations may take their place: certain is the larger of the
// two beside the weights and moments. Counting both exceeded the peak LibTorch 2.11 measured (423 MB against 416 MB).
TEST(MemoryNeed, TheActivationsCountOnlyBeyondTheGradients) {
  WorkerMemory need;
  need.state_bytes = 16e8;
  need.gradient_bytes = 4e8;
  need.activation_bytes = 1e8;
  EXPECT_DOUBLE_EQ(need.total(), 16e8);
  need.activation_bytes = 10e8;
  EXPECT_DOUBLE_EQ(need.total(), 22e8);
  EXPECT_NE(describe(need).find("at least 2.2 GB per worker: 1.6 GB of weights, gradients and optimizer moments, 1.0 GB "
                                "of one micro-batch's activations (made where the gradients are not yet)"),
            std::string::npos) << describe(need);
}

TEST(MemoryNeed, AvailableIsMemAvailablePlusSwapAndTheLimits) {
  const std::string meminfo = "MemTotal:       32000000 kB\nMemFree:         1000000 kB\nMemAvailable:   20000000 kB\n"
                              "SwapTotal:       4000000 kB\nSwapFree:        3000000 kB\n";
  const auto all = available_memory(meminfo, 4e9, 3e9);
  EXPECT_DOUBLE_EQ(all.machine.value(), 23000000.0 * 1024);
  EXPECT_DOUBLE_EQ(all.control_group.value(), 4e9);
  EXPECT_DOUBLE_EQ(all.per_process.value(), 3e9);
  EXPECT_DOUBLE_EQ(available_memory("MemAvailable: 1000 kB\n", std::nullopt, std::nullopt).machine.value(), 1024000.0);
  const auto unknown = available_memory("MemAvailable: lots\n", std::nullopt, std::nullopt);
  EXPECT_FALSE(unknown.machine || unknown.control_group || unknown.per_process);
  EXPECT_FALSE(available_memory("", std::nullopt, std::nullopt).machine.has_value());
}

TEST(MemoryNeed, TheShortfallNamesTheSizesWhereTheBoundComesFromAndTheKeys) {
  const TrainConfig c = tiny_config();
  WorkerMemory need;
  need.parameters = 600000000;
  need.state_bytes = 9.6e9;
  need.activation_bytes = 0.4e9;
  const AvailableMemory machine{15e9, std::nullopt, std::nullopt};
  EXPECT_FALSE(memory_shortfall(need, 1, machine, c).has_value());
  EXPECT_FALSE(memory_shortfall(need, 8, AvailableMemory{}, c).has_value()) << "nothing known: nothing refused";
  EXPECT_EQ(memory_shortfall(need, 2, machine, c).value(),
            "the run needs at least 20.0 GB of memory (2 workers on this machine, each at least 10.0 GB) but this machine "
            "has 15.0 GB available (MemAvailable + SwapFree): 600M parameters hold 9.6 GB in weights, gradients and "
            "AdamW's two moments, and one micro-batch's activations at least 400 MB; lower model.width or "
            "model.layers, or use fewer workers");
  // The workers share the machine and their control group, but each has an address space of its own.
  EXPECT_FALSE(memory_shortfall(need, 2, AvailableMemory{1e12, std::nullopt, 12e9}, c).has_value());
  const auto starts = [](const std::string& line, const std::string& start) { return line.rfind(start, 0) == 0; };
  const auto per_process = memory_shortfall(need, 2, AvailableMemory{1e12, 30e9, 8e9}, c).value();
  EXPECT_TRUE(starts(per_process, "the run needs at least 10.0 GB of memory per worker but the address-space limit "
                                  "(ulimit -v) allows 8.0 GB: ")) << per_process;
  EXPECT_EQ(per_process.find("fewer workers"), std::string::npos) << "each worker has the limit of its own";
  const auto group_of_two = memory_shortfall(need, 2, AvailableMemory{1e12, 15e9, 12e9}, c).value();
  EXPECT_TRUE(starts(group_of_two, "the run needs at least 20.0 GB of memory (2 workers on this machine, each at least "
                                   "10.0 GB) but the control group's memory limit allows 15.0 GB: ")) << group_of_two;
  const AvailableMemory group{1e12, 8e9, std::nullopt};
  need.state_bytes = 0.1e9;
  need.activation_bytes = 9e9;
  const auto line = memory_shortfall(need, 1, group, c).value();
  EXPECT_NE(line.find("the run needs at least 9.1 GB of memory but the control group's memory limit allows 8.0 GB: "),
            std::string::npos) << line;
  EXPECT_NE(line.find("raise train.accumulation (smaller micro-batches, the same result) or lower train.batch or model.context"),
            std::string::npos) << line;
  TrainConfig copies = c;  // the state counts every model copy of a worker, and plain SGD keeps no moments
  copies.hdet.enabled = true;
  copies.hdet.replicas_per_rank = 3;
  copies.optim.name = OptimizerName::sgd;
  copies.optim.momentum = 0;
  EXPECT_NE(memory_shortfall(need, 1, group, copies)
                .value()
                .find(": 600M parameters in each of a worker's 3 model copies (hdet.replicas_per_rank) hold 100 MB in "
                      "weights and gradients, and "),
            std::string::npos);
  // Counts from a trillion on read as plain numbers ("2.5e+03B" read as 2,500 billion).
  WorkerMemory trillions = need;
  trillions.parameters = 2500000000000;
  EXPECT_NE(memory_shortfall(trillions, 2, machine, c).value().find(": 2.5e+12 parameters hold "), std::string::npos);
}

}  // namespace
}  // namespace lrkit::train
