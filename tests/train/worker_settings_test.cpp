// Every worker's settings compared with rank 0's (settings_checks.hpp), over a
// real group of threads as ranks.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "settings_checks.hpp"
#include "test_files.hpp"
#include "thread_ranks.hpp"

namespace lrkit::train {
namespace {

// What require_one_config threw on each rank ("" where it returned), rank r with configs[r].
std::vector<std::string> refusals(const std::vector<TrainConfig>& configs) {
  return lrkit::testing::refusals_on_thread_ranks(static_cast<int>(configs.size()), [&](size_t r, distributed::Collective& group) {
    require_one_config(configs[r], configs[r].learning_rate_schedule(), group);
  });
}

TEST(WorkerSettings, WhatIsEachMachinesOwnMayDiffer) {
  std::vector<TrainConfig> configs(3);
  configs[1].data.path = "/mnt/b/kjv.txt";  // another mount point of the same corpus
  configs[1].train.threads = 8;
  configs[2].train.peak_tflops = 312;
  configs[2].dist.timeout_s = 30;
  configs[1].dist.rank0_timeout_s = 7200;  // how long this machine's workers wait for rank 0
  EXPECT_EQ(refusals(configs), std::vector<std::string>(3, ""));
}

TEST(WorkerSettings, EveryWorkerRefusesNamingTheKeysWithItsOwnValues) {
  std::vector<TrainConfig> configs(3);
  configs[2].optim.beta2 = 0.99;
  configs[2].schedule = "cosine(peak=1e-3)";
  const auto out = refusals(configs);
  const std::string head = "the workers run with different settings: rank 2 differs from rank 0 in ";
  const std::string tail = "'s values); start every worker with the same config file and options";
  EXPECT_EQ(out[0], head + "optim.beta2 = 0.95, schedule.spec = wsd(peak=1e-3, warmup=5%, decay=20%) (rank 0" + tail);
  EXPECT_EQ(out[1], head + "optim.beta2 = 0.95, schedule.spec = wsd(peak=1e-3, warmup=5%, decay=20%) (rank 1" + tail);
  EXPECT_EQ(out[2], head + "optim.beta2 = 0.99, schedule.spec = cosine(peak=1e-3) (rank 2" + tail);
}

// A spec that names a file compares by its rates: each machine may mount the file elsewhere.
TEST(WorkerSettings, TheScheduleComparesByItsRates) {
  std::vector<TrainConfig> configs(2);
  configs[0].schedule = "wsd(peak=1e-3, warmup=5%, decay=20%)";
  configs[1].schedule = "wsd(peak=0.001, warmup=5%, decay=20%)";  // the same rates, written otherwise
  EXPECT_EQ(refusals(configs), std::vector<std::string>(2, ""));
  configs[1].schedule = "wsd(peak=1e-3, warmup=5%, decay=10%)";
  EXPECT_NE(refusals(configs)[1].find("in schedule.spec = wsd(peak=1e-3, warmup=5%, decay=10%) (rank 1's values)"),
            std::string::npos);
}

// Each machine may keep a copy of the corpus under a path of its own, but not another corpus, even one of its size.
TEST(WorkerSettings, DataFilesCompareByTheirContents) {
  const auto write = [](const std::string& name, const std::string& text) {
    return lrkit::testing::write_text("worker_settings_" + name, text);
  };
  std::vector<TrainConfig> configs(2);
  configs[0].data.path = write("a.txt", "In the beginning");
  configs[1].data.path = write("b.txt", "In the beginning");
  EXPECT_EQ(refusals(configs), std::vector<std::string>(2, ""));
  configs[1].data.path = write("c.txt", "In the beginn");  // a copy cut short
  EXPECT_NE(refusals(configs)[1].find("in data contents = 13 bytes, sampled crc32:7ff01248 ('" + configs[1].data.path +
                                      "') (rank 1's values)"),
            std::string::npos);
  configs[1].data.path = write("d.txt", "In the Beginning");  // another version of the size
  EXPECT_NE(refusals(configs)[1].find("in data contents = 16 bytes, sampled crc32:ec9bffff ('" + configs[1].data.path +
                                      "') (rank 1's values)"),
            std::string::npos);
  const std::string full = configs[0].data.path, cut = write("c.txt", "In the beginn");
  configs[0].data.sources = "bible=" + full + ", more=" + full;
  configs[1].data.sources = "bible=" + full + ", more=" + cut;
  const std::string whole = "16 bytes, sampled crc32:6e6a7d5c ('" + full + "')";
  EXPECT_EQ(refusals(configs)[0],
            "the workers run with different settings: rank 1 differs from rank 0 in data contents = bible " + whole +
                "; more " + whole + " (rank 0's values); start every worker with the same config file and options");
  // Other sources on one rank: a difference in settings, not in lrkit's keys.
  configs[1].data.sources = "bible=" + full;
  const auto other_sources = refusals(configs)[1];
  EXPECT_NE(other_sources.find("rank 1 differs from rank 0 in data.sources = bible, "), std::string::npos) << other_sources;
  EXPECT_NE(other_sources.find(", data contents = bible " + whole + " (rank 1's values)"), std::string::npos)
      << other_sources;
}

TEST(WorkerSettings, SeveralRanksThatDifferAreNamedTogether) {
  std::vector<TrainConfig> configs(4);
  configs[1].train.batch = configs[3].train.batch = 64;
  EXPECT_NE(refusals(configs)[3].find("ranks 1, 3 differ from rank 0 in train.batch = 64 (rank 3's values)"),
            std::string::npos);
}

}  // namespace
}  // namespace lrkit::train
