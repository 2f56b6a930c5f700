// `lrkit sweep` run again after the sweep file's settings that change no result were edited (sweep_runner.cpp):
// the runs go on under the new settings, and the results are those the first settings gave.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace {

namespace fs = std::filesystem;
using lrkit::testing::out_dir;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;

std::string sweep_file(const std::string& out, const std::string& sections) {
  return lrkit::testing::write_text("sweep_cadences.cfg", "[sweep]\ntrain_config = " + tiny_config() + "\nout = " + out +
                                                              "\nbudgets = 4, 8\n[schedules]\nc = cosine(peak=1e-2)\n" +
                                                              sections);
}

// They were refused: "started with other settings ... delete it", and the checkpoints trained were lost with it.
TEST(SweepRunner, ARunWhoseCadencesWereEditedGoesOnUnderThemAndOtherEditsAreRefused) {
  const auto out = out_dir("sweep_cadences");
  auto r = run_lrkit("sweep --config " + sweep_file(out, "[train]\nlog_every = 2\n[checkpoint]\nevery = 2\n"));
  ASSERT_EQ(r.code, 0) << r.out;
  const auto results = lrkit::h5::read_series(out + "/summary.h5", "/results/loss");
  ASSERT_EQ(results.size(), 2u);
  // The longer run stopped after its checkpoint at step 6.
  const auto cut = out + "/runs/c_B8_s1234";
  fs::remove(cut + "/sweep_done");
  fs::remove(cut + "/checkpoints/step_0000000008.pt");
  r = run_lrkit("sweep --config " + sweep_file(out, "[train]\nlog_every = 3\n[eval]\nevery = 4\n[checkpoint]\nevery = 3\n"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: c_B8_s1234 goes on with checkpoint.every = 2 -> 3; eval.every = (unset) -> 4; "
                       "train.log_every = 2 -> 3 (settings that change no result, since it started)\n"),
            std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("c_B4_s1234 goes on"), std::string::npos) << "a finished run trains nothing\n" << r.out;
  EXPECT_NE(r.out.find("sweep: 2 runs, 1 finished before"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("sweep: started c_B8_s1234 (2 steps, from its checkpoint at step 6)"), std::string::npos) << r.out;
  EXPECT_EQ(lrkit::h5::read_series(out + "/summary.h5", "/results/loss"), results) << "bit for bit";
  EXPECT_NE(lrkit::read_text(cut + "/sweep_args.txt").find("--train.log_every=3\n"), std::string::npos);
  EXPECT_NE(lrkit::read_text(cut + "/train.txt").find("changed since the session before: train.log_every = 2 -> 3"),
            std::string::npos);
  // Called again, nothing is left to train.
  r = run_lrkit("sweep --config " + sweep_file(out, "[train]\nlog_every = 3\n[eval]\nevery = 4\n[checkpoint]\nevery = 3\n"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("sweep: 2 runs, 2 finished before"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("goes on"), std::string::npos) << r.out;
  // A setting that changes the updates is another run.
  r = run_lrkit("sweep --config " + sweep_file(out, "[train]\nlog_every = 3\n[optim]\nclip = 0.5\n"));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("c_B4_s1234' was started with other settings (see its sweep_args.txt) and holds checkpoints"),
            std::string::npos) << r.out;
}

}  // namespace
