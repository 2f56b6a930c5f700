// The CPU quota and memory limit of a control group, read from a tree laid out as the kernel lays out
// /sys/fs/cgroup (v2 and v1), with /proc/self/cgroup and /proc/self/mountinfo texts
// pointing into it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "lrkit/train/cgroup_limits.hpp"
#include "test_files.hpp"

namespace lrkit::train {
namespace {

namespace fs = std::filesystem;

class CgroupLimitsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = lrkit::testing::scratch_dir() / ::testing::UnitTest::GetInstance()->current_test_info()->name();
    lrkit::testing::remove_tree(root_);
    fs::create_directories(root_);
  }
  // Writes `text` to `file` under the fake tree, creating its directories.
  void write(const std::string& file, const std::string& text) {
    const fs::path path = root_ / file;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text << "\n";
  }
  // A mountinfo line for a cgroup2 mount (or a v1 mount carrying `options`) of `root` at `point` under the tree.
  std::string v2_mount(const std::string& point, const std::string& root = "/") const {
    return "30 22 0:27 " + root + " " + (root_ / point).string() + " rw,nosuid,nodev shared:4 - cgroup2 cgroup2 rw,nsdelegate\n";
  }
  std::string v1_mount(const std::string& point, const std::string& options, const std::string& root = "/") const {
    return "31 30 0:28 " + root + " " + (root_ / point).string() + " rw,relatime - cgroup cgroup rw," + options + "\n";
  }
  fs::path root_;
};

constexpr const char* kOtherMounts = "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
                                     "40 22 0:40 / /proc rw - proc proc rw\n";

TEST_F(CgroupLimitsTest, Version2QuotaOverPeriod) {
  write("cg/cpu.max", "150000 100000");  // docker run --cpus=1.5, inside its cgroup namespace
  const auto limit = cgroup_cpu_limit("0::/\n", kOtherMounts + v2_mount("cg"));
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 1.5);
}

TEST_F(CgroupLimitsTest, AParentsLimitBindsItsChildren) {
  write("cg/cpu.max", "max 100000");
  write("cg/kubepods/cpu.max", "400000 100000");
  write("cg/kubepods/pod7/cpu.max", "200000 100000");
  write("cg/kubepods/pod7/app/cpu.max", "max 100000");
  const auto limit = cgroup_cpu_limit("0::/kubepods/pod7/app\n", v2_mount("cg"));
  ASSERT_TRUE(limit.has_value());
  EXPECT_DOUBLE_EQ(*limit, 2.0);
  write("cg/kubepods/pod7/app/cpu.max", "50000 100000");  // the smallest wins wherever it is
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit("0::/kubepods/pod7/app\n", v2_mount("cg")).value(), 0.5);
}

TEST_F(CgroupLimitsTest, NoLimitAnywhereIsNone) {
  write("cg/cpu.max", "max 100000");
  write("cg/user.slice/cpu.max", "max 100000");
  EXPECT_FALSE(cgroup_cpu_limit("0::/user.slice\n", v2_mount("cg")).has_value());
  EXPECT_FALSE(cgroup_cpu_limit("0::/\n", kOtherMounts).has_value());  // no cgroup file system mounted
  EXPECT_FALSE(cgroup_cpu_limit("", "").has_value());                   // /proc unreadable
}

TEST_F(CgroupLimitsTest, Version1CfsQuotaInTheHierarchyWithTheCpuController) {
  write("cpu,cpuacct/cpu.cfs_quota_us", "-1");
  write("cpu,cpuacct/cpu.cfs_period_us", "100000");
  write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "300000");
  write("cpu,cpuacct/docker/abc/cpu.cfs_period_us", "100000");
  write("memory/docker/abc/cpu.cfs_quota_us", "100000");  // not the cpu hierarchy: never read
  write("memory/docker/abc/cpu.cfs_period_us", "100000");
  const std::string cgroups = "5:memory:/docker/abc\n4:cpu,cpuacct:/docker/abc\n0::/\n";
  const std::string mounts = v1_mount("memory", "memory") + v1_mount("cpu,cpuacct", "cpu,cpuacct");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(cgroups, mounts).value(), 3.0);
  write("cpu,cpuacct/docker/abc/cpu.cfs_quota_us", "-1");
  EXPECT_FALSE(cgroup_cpu_limit(cgroups, mounts).has_value());
}

// A container without its own cgroup namespace mounts its part of the hierarchy: the mount's root is the
// container's cgroup, and the path in /proc/self/cgroup is relative to the host's root.
TEST_F(CgroupLimitsTest, AMountOfPartOfTheHierarchy) {
  write("cpu/cpu.cfs_quota_us", "200000");
  write("cpu/cpu.cfs_period_us", "100000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit("3:cpu:/docker/abc\n", v1_mount("cpu", "cpu", "/docker/abc")).value(), 2.0);
  write("v2/cpu.max", "100000 100000");
  write("v2/job/cpu.max", "max 100000");
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit("0::/slurm/uid_0/job\n", v2_mount("v2", "/slurm/uid_0")).value(), 1.0);
  // Not under the mounted root (another namespace's view): only the mount point itself is read.
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit("0::/elsewhere\n", v2_mount("v2", "/slurm/uid_0")).value(), 1.0);
}

TEST_F(CgroupLimitsTest, EscapedSpacesInTheMountPoint) {
  write("with space/cpu.max", "250000 100000");
  std::string mount = v2_mount("with space");
  mount.replace(mount.find("with space"), 10, "with\\040space");  // as mountinfo writes it
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit("0::/\n", mount).value(), 2.5);
}

TEST_F(CgroupLimitsTest, MalformedFilesAreNoLimit) {
  for (const char* text : {"", "max", "100000", "garbage 100000", "100000 0", "-5 100000", "1e5x 100000", "1 2 3"}) {
    write("cg/cpu.max", text);
    EXPECT_FALSE(cgroup_cpu_limit("0::/\n", v2_mount("cg")).has_value()) << "cpu.max: '" << text << "'";
  }
  write("cg/cpu.max", "100000 100000");
  for (const char* cgroups : {"garbage\n", "0:/\n", "1:cpu:/\n"})  // no v2 line
    EXPECT_FALSE(cgroup_cpu_limit(cgroups, v2_mount("cg")).has_value()) << cgroups;
  EXPECT_FALSE(cgroup_cpu_limit("0::/\n", "30 22 0:27 / - cgroup2\n").has_value());  // a truncated mount line
}

TEST_F(CgroupLimitsTest, MemoryLimitVersion2TheSmallestOnThePath) {
  write("cg/memory.max", "max");
  write("cg/kubepods/memory.max", "17179869184");
  write("cg/kubepods/pod7/memory.max", "4294967296");  // a 4 GiB pod limit
  write("cg/kubepods/pod7/app/memory.max", "max");
  write("cg/kubepods/pod7/app/cpu.max", "100000 100000");
  const std::string cgroups = "0::/kubepods/pod7/app\n";
  EXPECT_DOUBLE_EQ(cgroup_memory_limit(cgroups, v2_mount("cg")).value(), 4294967296.0);
  EXPECT_DOUBLE_EQ(cgroup_cpu_limit(cgroups, v2_mount("cg")).value(), 1.0);  // each controller reads its own files
  write("cg/kubepods/pod7/memory.max", "max");
  EXPECT_DOUBLE_EQ(cgroup_memory_limit(cgroups, v2_mount("cg")).value(), 17179869184.0);
  write("cg/kubepods/memory.max", "max");
  EXPECT_FALSE(cgroup_memory_limit(cgroups, v2_mount("cg")).has_value());
}

TEST_F(CgroupLimitsTest, MemoryLimitVersion1InTheHierarchyWithTheMemoryController) {
  write("memory/memory.limit_in_bytes", "9223372036854771712");  // v1's "no limit"
  write("memory/docker/abc/memory.limit_in_bytes", "2147483648");
  write("cpu/docker/abc/memory.limit_in_bytes", "1024");  // not the memory hierarchy: never read
  const std::string cgroups = "5:memory:/docker/abc\n4:cpu:/docker/abc\n0::/\n";
  const std::string mounts = v1_mount("memory", "memory") + v1_mount("cpu", "cpu");
  EXPECT_DOUBLE_EQ(cgroup_memory_limit(cgroups, mounts).value(), 2147483648.0);
  write("memory/docker/abc/memory.limit_in_bytes", "9223372036854771712");
  EXPECT_FALSE(cgroup_memory_limit(cgroups, mounts).has_value());
  EXPECT_FALSE(cgroup_memory_limit("4:cpu:/docker/abc\n", mounts).has_value());  // in no memory cgroup
}

TEST_F(CgroupLimitsTest, MalformedMemoryFilesAreNoLimit) {
  for (const char* text : {"", "max", "garbage", "-1", "0", "12abc", "1 2"}) {
    write("cg/memory.max", text);
    EXPECT_FALSE(cgroup_memory_limit("0::/\n", v2_mount("cg")).has_value()) << "memory.max: '" << text << "'";
  }
}

}  // namespace
}  // namespace lrkit::train
