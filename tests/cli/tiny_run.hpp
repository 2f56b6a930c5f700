// The tiny data-parallel run the CLI tests share: a generated corpus, a
// 12-step config of a one-layer model, a run of it in two sessions, and the
// check that two of its runs trained alike.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "lrkit/h5/file.hpp"
#include "run_command.hpp"
#include "test_files.hpp"

namespace lrkit::testing {

inline std::string tiny_config() {
  static const std::string path = [] {
    std::string text;
    for (int i = 0; i < 500; ++i) text += "Blessed are the meek: for they shall inherit the earth. " + std::to_string(i) + "\n";
    const auto corpus = write_text("dp_corpus.txt", text);
    return write_text("dp.cfg", "[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n"
                                "[data]\npath = " + corpus + "\n"
                                "[train]\nsteps = 12\nbatch = 8\nlog_every = 6\nthreads = 1\n"
                                "[eval]\nevery = 0\nbatches = 1\n"
                                "[schedule]\nspec = cosine(peak=1e-2, warmup=2)\n");
  }();
  return path;
}

inline std::string out_dir(const std::string& name) {
  const auto dir = scratch_dir() / name;
  lrkit::testing::remove_tree(dir);
  return dir.string();
}

// A tiny run under `spec` trained in two sessions: to step 6 (checkpointed), then resumed to the config's 12 with
// `resume_args` added. Returns the run directory; a session that fails fails the test.
inline std::string two_session_tiny_run(const std::string& name, const std::string& spec,
                                        const std::string& resume_args = "") {
  const auto dir = out_dir(name);
  const std::string train = "train --config " + tiny_config() + " --out " + dir +
                            " --checkpoint.every 6 --schedule.spec '" + spec + "'";
  for (const std::string& session : {train + " --train.steps 6", train + " --resume auto" + resume_args}) {
    const auto r = run_lrkit(session);
    EXPECT_EQ(r.code, 0) << session << "\n" << r.out;
  }
  return dir;
}

// The two run logs hold the same 12 training losses (to 1e-5 relative: workers sum in another order).
inline void expect_same_losses(const std::string& a_log, const std::string& b_log) {
  const auto a = lrkit::h5::read_series(a_log, "/train/loss");
  const auto b = lrkit::h5::read_series(b_log, "/train/loss");
  ASSERT_EQ(a.size(), 12u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-5 * std::fabs(a[i])) << "step " << i;
}

}  // namespace lrkit::testing
