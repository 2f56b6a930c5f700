// `lrkit train` sizes its threads for the CPUs the process may use, not the machine's:
// under `taskset` (as under a container's cpuset or a batch system's binding) and
// under a control group's CPU quota (docker --cpus, a Kubernetes CPU limit).
#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "lrkit/h5/file.hpp"
#include "openblas.hpp"
#include "process_cpus.hpp"
#include "run_command.hpp"
#include "test_files.hpp"
#include "tiny_run.hpp"

namespace {

namespace fs = std::filesystem;
using lrkit::testing::out_dir;
using lrkit::testing::run_command;
using lrkit::testing::tiny_config;

std::string one_cpu_threads() { return lrkit::testing::worker_threads_text(1, 1); }

std::string tiny_run_args(const std::string& out) {
  return " train --config " + tiny_config() + " --train.steps=3 --train.threads=0 --out " + out;
}

void expect_one_cpu_threads(const lrkit::testing::CommandResult& r, const std::string& out) {
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("threads per worker: " + one_cpu_threads() + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_string_attributes(out + "/log.h5", "/start").at("threads"), one_cpu_threads());
}

TEST(TrainThreads, SizedForTheCpusOfTheAffinityMask) {
  if (lrkit::testing::process_cpus() < 2) GTEST_SKIP() << "one CPU: a narrower affinity mask cannot be told from the machine";
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(::sched_getaffinity(0, sizeof mask, &mask), 0);
  int first = 0;
  while (!CPU_ISSET(first, &mask)) ++first;
  const auto out = out_dir("one_cpu");
  expect_one_cpu_threads(run_command("taskset -c " + std::to_string(first) + " " + LRKIT_BINARY + tiny_run_args(out)), out);
}

bool write_file(const fs::path& file, const std::string& text) {
  std::ofstream out(file);
  out << text << std::flush;  // the kernel answers a cgroup file's write when it is flushed
  return out.good();
}

// A control group of its own with a quota of one CPU, where the test may make one (as root, in a cgroup v1 cpu
// hierarchy or a v2 hierarchy whose root hands out the cpu controller); removed at the end.
class OneCpuControlGroup {
 public:
  OneCpuControlGroup() {
    const std::string name = "lrkit_test_" + std::to_string(::getpid());
    for (const fs::path v1 : {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"})
      if (fs::exists(v1 / "cpu.cfs_quota_us") &&
          make(v1 / name, {{"cpu.cfs_period_us", "100000"}, {"cpu.cfs_quota_us", "100000"}}))
        return;
    const fs::path v2 = "/sys/fs/cgroup";
    if (fs::exists(v2 / "cgroup.subtree_control")) make(v2 / name, {{"cpu.max", "100000 100000"}});
  }
  ~OneCpuControlGroup() {
    std::error_code ignored;
    if (directory_) fs::remove(*directory_, ignored);  // rmdir: its processes have ended
  }
  OneCpuControlGroup(const OneCpuControlGroup&) = delete;
  OneCpuControlGroup& operator=(const OneCpuControlGroup&) = delete;

  bool made() const { return directory_.has_value(); }
  // A shell command that moves the shell into the group and then becomes `command`.
  std::string run_inside(const std::string& command) const {
    return "sh -c 'echo $$ > " + (*directory_ / "cgroup.procs").string() + " && exec " + command + "'";
  }

 private:
  bool make(const fs::path& directory, std::initializer_list<std::pair<const char*, const char*>> settings) {
    std::error_code error;
    if (!fs::create_directory(directory, error)) return false;
    for (const auto& [file, value] : settings)
      if (!write_file(directory / file, value)) {
        fs::remove(directory, error);
        return false;
      }
    directory_ = directory;
    return true;
  }
  std::optional<fs::path> directory_;
};

TEST(TrainThreads, SizedForTheCpuQuotaOfTheControlGroup) {
  if (lrkit::testing::process_cpus() < 2) GTEST_SKIP() << "one CPU: a one-CPU quota cannot be told from the machine";
  const OneCpuControlGroup group;
  if (!group.made())
    GTEST_SKIP() << "this test cannot make a control group with a CPU quota here (it needs root and a writable "
                    "cgroup cpu controller); the quota's reading is tested on a tree of files (CgroupLimitsTest)";
  const auto out = out_dir("one_cpu_quota");
  expect_one_cpu_threads(run_command(group.run_inside(std::string(LRKIT_BINARY) + tiny_run_args(out))), out);
}

// 4,096 threads on 2 CPUs made each step of this model take 25 s. Refused once, before the workers start or the run
// directory is made, with the config file's line where the file set the key.
TEST(TrainThreads, MoreThreadsThanTheCpusAreRefusedOnceBeforeAnythingStarts) {
  const int cpus = lrkit::testing::process_cpus();
  const std::string refusal = "train.threads = 4096 is more than the " + std::to_string(cpus) + " CPU(s) this worker may run on";
  for (const char* workers : {"1", "2"}) {
    const auto out = out_dir("too_many_threads");
    const auto r = run_command(std::string(LRKIT_BINARY) + " train --config " + tiny_config() + " --nproc " + workers +
                               " --train.threads=4096 --out " + out);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out.rfind("lrkit train: " + refusal, 0), 0u) << r.out;
    EXPECT_EQ(lrkit::testing::count_lines(r.out), 1) << r.out;
    EXPECT_FALSE(fs::exists(out)) << workers << " worker(s)";
  }
  const auto config = lrkit::testing::write_text(
      "many_threads.cfg", "[data]\npath = " + lrkit::testing::write_text("many_threads.txt", std::string(4000, 'a')) +
                              "\n[train]\nthreads = 4096\n");
  const auto r = run_command(std::string(LRKIT_BINARY) + " train --config " + config + " --out " + out_dir("too_many_threads"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("lrkit train: config file '" + config + "' line 4: " + refusal, 0), 0u) << r.out;
}

}  // namespace
