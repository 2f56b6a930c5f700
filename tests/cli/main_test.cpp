// cli/main.cpp and torch_commands.cpp: `lrkit` runs schedule, diagnose and refine itself without loading LibTorch,
// and becomes lrkit-torch for train, sweep and log (or says why it cannot).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "run_command.hpp"
#include "test_files.hpp"

namespace {

namespace fs = std::filesystem;
using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;

TEST(LrkitMain, UsageVersionAndUnknownCommands) {
  auto r = run_lrkit("--help");
  EXPECT_EQ(r.code, 0);
  for (const char* command : {"schedule SPEC", "train ", "diagnose RUN", "refine RUN", "sweep ", "log check|repair"})
    EXPECT_NE(r.out.find("\n  " + std::string(command)), std::string::npos) << command << "\n" << r.out;
  EXPECT_EQ(run_lrkit("").code, 2);
  r = run_lrkit("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("lrkit ", 0), 0u) << r.out;
  r = run_lrkit("frobnicate");
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out.rfind("lrkit: unknown command 'frobnicate'\nusage: lrkit <command>", 0), 0u) << r.out;
  r = run_lrkit("trian");  // the suggestion covers lrkit-torch's commands too
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.out.rfind("lrkit: unknown command 'trian'; did you mean 'train'?\n", 0), 0u) << r.out;
}

// The point of the split: the process that runs schedule, diagnose and refine never maps LibTorch.
TEST(LrkitMain, LoadsNoLibTorch) {
  const auto r = run_command("ldd " + std::string(LRKIT_BINARY));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("libhdf5"), std::string::npos) << r.out;  // ldd lists what it loads
  for (const char* library : {"libtorch", "libc10"}) EXPECT_EQ(r.out.find(library), std::string::npos) << r.out;
}

#if LRKIT_TORCH_COMMANDS

TEST(LrkitMain, TrainSweepAndLogRunInLrkitTorch) {
  auto r = run_lrkit("train --help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("--train.steps"), std::string::npos) << r.out;
  r = run_lrkit("sweep --help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("--dry-run"), std::string::npos) << r.out;
  r = run_lrkit("log check /nonexistent/log.h5");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.rfind("lrkit log: ", 0), 0u) << r.out;
  // That the process keeps its pid (exec) is run_directory_test's: the pid `lrkit train` started as holds the lock.
}

// A link to `lrkit` elsewhere (on the PATH) finds lrkit-torch beside the executable it names; a copy of `lrkit`
// alone says what it lacks.
TEST(LrkitMain, LrkitTorchIsFoundBesideTheExecutableNotTheLink) {
  const auto dir = lrkit::testing::scratch_dir() / "lrkit_main_elsewhere";
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir / "linked");
  fs::create_directories(dir / "copied");
  fs::create_symlink(fs::canonical(LRKIT_BINARY), dir / "linked" / "lrkit");
  auto r = run_command((dir / "linked" / "lrkit").string() + " train --help");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("--train.steps"), std::string::npos) << r.out;
  fs::copy_file(LRKIT_BINARY, dir / "copied" / "lrkit");
  fs::permissions(dir / "copied" / "lrkit", fs::perms::owner_all);
  r = run_command((dir / "copied" / "lrkit").string() + " train --help");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_EQ(r.out, "lrkit train: cannot run '" + (dir / "copied" / "lrkit-torch").string() +
                       "', which runs lrkit's train, sweep and log beside lrkit: No such file or directory (cmake "
                       "--install puts both in one folder; a copy of lrkit needs lrkit-torch beside it)\n");
  r = run_command((dir / "copied" / "lrkit").string() + " schedule 'linear(peak=1)' --steps 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out, "step,lr\n0,1\n1,0.5\n2,0\n");
}

TEST(LrkitMain, LrkitTorchAloneSendsOtherCommandsToLrkit) {
  for (const std::string args : {"", "schedule 'linear(peak=1)' --steps 2", "--help"}) {
    const auto r = run_command(std::string(LRKIT_TORCH_BINARY) + " " + args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.out;
    const std::string command = args.empty() ? "--help" : args.substr(0, args.find(' '));
    EXPECT_EQ(r.out, "lrkit-torch runs lrkit's train, sweep and log commands for `lrkit`: run 'lrkit " + command + "'\n");
  }
}

#else

TEST(LrkitMain, WithoutLibTorchTrainSweepAndLogSayWhy) {
  for (const char* command : {"train", "sweep", "log"}) {
    const auto r = run_lrkit(std::string(command) + " --help");
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(r.out, "lrkit " + std::string(command) + ": this lrkit was built without LibTorch (LRKIT_WITH_TORCH=OFF, "
                     "or none was found), which train, sweep and log need; schedule, diagnose and refine work\n");
  }
}

#endif

}  // namespace
