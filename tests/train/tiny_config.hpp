// The tiny in-process training run the trainer tests share.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <stdexcept>
#include <string>

#include "lrkit/train/train_config.hpp"
#include "lrkit/train/trainer.hpp"
#include "test_files.hpp"

namespace lrkit::train {

inline std::string small_corpus() {
  std::string text;
  for (int i = 0; i < 400; ++i) text += "In the beginning was the word, and the word was " + std::to_string(i % 7) + ".\n";
  return lrkit::testing::write_text("corpus.txt", text);
}

inline TrainConfig tiny_config() {
  TrainConfig c;
  c.model = {256, 16, 1, 2, 16, 0.0};
  c.data.path = small_corpus();
  c.train.steps = 30;
  c.train.batch = 8;
  c.train.log_every = 10;
  c.train.threads = 1;
  c.eval.every = 0;
  c.eval.batches = 2;
  c.schedule = "cosine(peak=1e-2, warmup=3)";
  c.out = (lrkit::testing::scratch_dir() / "run").string();
  return c;
}

// Training with `c` must fail up front with an error containing `needle`.
inline void expect_config_error(const TrainConfig& c, const std::string& needle) {
  std::ostringstream progress;
  try {
    run_training(c, progress);
    ADD_FAILURE() << "no error for " << needle;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

}  // namespace lrkit::train
