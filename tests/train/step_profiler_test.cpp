// train.profile_steps: the trace of a window of updates, on each device.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "../device_param.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/train/step_profiler.hpp"
#include "lrkit/train/run_files.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

int64_t meta_number(const std::string& trace, const std::string& key) {
  std::smatch m;
  const std::string head = trace.substr(0, trace.find("traceEvents"));
  if (!std::regex_search(head, m, std::regex("\"" + key + "\":([0-9]+)"))) return -1;
  return std::stoll(m[1]);
}

class StepProfilerOnDevice : public lrkit::testing::OnDevice {};

TEST_P(StepProfilerOnDevice, TracesTheWindowWithPhasesOperatorsAndKernels) {
  auto c = tiny_config();
  c.train.steps = 6;
  c.train.profile_from = 3;
  c.train.profile_steps = 2;
  c.out = (lrkit::testing::scratch_dir() / named("profiled")).string();
  if (cuda()) c.train.device = DeviceKind::cuda;
  std::ostringstream progress;
  run_training(c, progress);
  const std::string path = profile_trace_path(c.out, 0);
  ASSERT_TRUE(std::filesystem::exists(path)) << progress.str();
  EXPECT_NE(progress.str().find("of updates 3..4 in " + path), std::string::npos) << progress.str();
  EXPECT_EQ(lrkit::testing::temporaries_beside(path), std::vector<std::string>{});

  const std::string trace = lrkit::read_text(path);
  ASSERT_EQ(trace.rfind("{\"lrkit\":{\"format\":\"lrkit-trace 1\"", 0), 0u) << trace.substr(0, 200);
  ASSERT_EQ(trace.substr(trace.size() - 3), "]}\n");
  EXPECT_EQ(meta_number(trace, "first_step"), 3);
  EXPECT_EQ(meta_number(trace, "steps"), 2);
  // Every event is one line; the header counts them.
  EXPECT_EQ(static_cast<int64_t>(count_of(trace, "\n{\"ph\":\"X\"")),
            meta_number(trace, "host_events") + meta_number(trace, "device_events"));
  // The host's ranges; on CUDA, Kineto adds each range that launched work on the device's timeline too
  // ("gpu_user_annotation"), which LibTorch 2.11's CUPTI does for all but lrkit.step and lrkit.record.
  const auto host_range = [](const std::string& name) { return "\"cat\":\"user_annotation\",\"name\":\"" + name + "\""; };
  EXPECT_EQ(count_of(trace, host_range("lrkit.step")), 2u);
  for (const char* phase : {"lrkit.forward_backward", "lrkit.synchronize", "lrkit.step_scalars", "lrkit.optimizer", "lrkit.record"})
    EXPECT_EQ(count_of(trace, host_range(phase)), 2u) << phase;
  // Each linear layer is one addmm with its bias (4 per block per step), not a matmul and a second pass.
  EXPECT_EQ(count_of(trace, "\"name\":\"aten::addmm\""), 2u * 4u * static_cast<size_t>(c.model.layers));
  EXPECT_GT(count_of(trace, "\"cat\":\"cpu_op\""), 100u);
  if (cuda()) {  // kernels where LibTorch has Kineto with CUPTI (every CUDA wheel does)
    EXPECT_GT(meta_number(trace, "device_events"), 0);
    EXPECT_GT(count_of(trace, "\"cat\":\"kernel\""), 50u);
    EXPECT_NE(trace.find("\"pid\":\"cuda:0\""), std::string::npos);
  } else {
    EXPECT_EQ(meta_number(trace, "device_events"), 0);
  }
}

LRKIT_ON_DEVICES(StepProfilerOnDevice);

TEST(StepProfiler, NothingIsTracedWithoutProfileSteps) {
  auto c = tiny_config();
  c.train.steps = 5;
  c.out = (lrkit::testing::scratch_dir() / "unprofiled").string();
  std::ostringstream progress;
  run_training(c, progress);
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(c.out) / "profile"));
  EXPECT_EQ(progress.str().find("profile:"), std::string::npos);
}

TEST(StepProfiler, AWindowBeyondTheRunIsAConfigError) {
  auto c = tiny_config();
  c.train.steps = 10;
  c.train.profile_steps = 3;
  c.train.profile_from = 9;
  expect_config_error(c, "train.profile_from (9) + train.profile_steps (3) - 1 is beyond train.steps (10)");
}

TEST(StepProfiler, NamesAreEscapedIntoValidJsonStrings) {
  const std::string path = (lrkit::testing::scratch_dir() / "escape" / "trace.json").string();
  StepProfiler profiler(0, 1, torch::Device(torch::kCPU), path, "a \"quoted\"\\device");
  profiler.before_step(0);
  {
    RECORD_USER_SCOPE("phase \"one\"\\two\nthree");
    (torch::ones({2}) + 1).sum();
  }
  const auto written = profiler.after_step(0);
  ASSERT_TRUE(written.has_value());
  EXPECT_GT(written->host_events, 1u);
  const std::string trace = lrkit::read_text(path);
  EXPECT_NE(trace.find(R"("device":"a \"quoted\"\\device")"), std::string::npos) << trace.substr(0, 300);
  EXPECT_NE(trace.find(R"("name":"phase \"one\"\\two\u000athree")"), std::string::npos);
}

TEST(StepProfiler, AnUnwritableTraceNamesTheFile) {
  const auto blocker = lrkit::testing::scratch_dir() / "blocker";
  std::ofstream(blocker) << "a file where the trace's directory would go";
  const std::string path = (blocker / "trace.json").string();
  StepProfiler profiler(0, 1, torch::Device(torch::kCPU), path, "cpu");
  profiler.before_step(0);
  try {
    profiler.after_step(0);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("blocker"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lrkit::train
