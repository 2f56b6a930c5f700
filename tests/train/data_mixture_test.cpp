// Multi-source data (data_mixture.hpp, ALGORITHMS.md section 8): temperature
// probabilities, which source each row comes from, upweighting, the config
// keys, and a training run that logs the mixture.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "lrkit/h5/file.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/train/data_mixture.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

std::string second_corpus() {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "Mr. Speaker, the state of the union is strong: " + std::to_string(i) + ".\n";
  return lrkit::testing::write_text("second_corpus.txt", text);
}

TrainConfig mixture_config(const std::string& mixing = "natural") {
  TrainConfig c = tiny_config();
  c.data.sources = "one=" + small_corpus() + ", two=" + second_corpus();
  c.data.mixing = mixing;
  return c;
}

TEST(DataMixture, OneSourceReadsExactlyWhatSampleBatchReads) {
  TrainConfig c = tiny_config();
  const DataMixture data(c);
  ASSERT_EQ(data.size(), 1u);
  const BatchKey key{7, 3, 0};
  const auto mixed = data.sample(2, 4, 16, key, data.sampling(3));
  const auto plain = sample_batch(data.corpus(0).train(), 2, 4, 16, key);
  EXPECT_TRUE(torch::equal(mixed.batch.inputs, plain.inputs));
  EXPECT_EQ(mixed.source, (std::vector<int64_t>(4, 0)));
}

TEST(DataMixture, RowsFollowTheSamplingDistributionAndAnySplit) {
  TrainConfig c = mixture_config("temperature");
  c.data.proportions = "0.9, 0.1";
  c.data.temperature = "constant(peak=3)";
  const DataMixture data(c);
  EXPECT_NEAR(data.natural()[0], 0.9, 1e-15);
  const auto p = data.sampling(0);
  EXPECT_NEAR(p[1], std::pow(0.1, 1 / 3.0) / (std::pow(0.9, 1 / 3.0) + std::pow(0.1, 1 / 3.0)), 1e-15);
  const int64_t rows = 20000;
  const auto counts = data.rows_per_source(rows, {5, 0, 0}, p);
  const double share = static_cast<double>(counts[1]) / rows;
  EXPECT_NEAR(share, p[1], 4 * std::sqrt(p[1] * (1 - p[1]) / rows)) << "binomial, 4 sigma";
  // Row j of a step is the same row however the batch is split.
  const BatchKey key{11, 4, 0};
  const auto whole = data.sample(0, 8, 16, key, p);
  const auto first = data.sample(0, 3, 16, key, p), rest = data.sample(3, 5, 16, key, p);
  EXPECT_TRUE(torch::equal(whole.batch.inputs, torch::cat({first.batch.inputs, rest.batch.inputs})));
  std::vector<int64_t> joined = first.source;
  joined.insert(joined.end(), rest.source.begin(), rest.source.end());
  EXPECT_EQ(whole.source, joined);
  const auto again = data.rows_per_source(8, key, p);
  EXPECT_EQ(again[1], std::count(whole.source.begin(), whole.source.end(), 1));
  // Proportions whose sum overflows (1e308 each) made every q 0, refused as "must be > 0 (entry 1)".
  c.data.proportions = "1e308, 3e307";
  const DataMixture huge(c);
  EXPECT_NEAR(huge.natural()[0], 1 / 1.3, 1e-15);
  EXPECT_NEAR(huge.natural()[1], 0.3 / 1.3, 1e-15);
}

TEST(DataMixture, UpweightingSamplesFromQAndWeighsByPOverQ) {
  TrainConfig c = mixture_config("upweight");
  c.data.proportions = "3, 1";
  c.data.temperature = "constant(peak=2)";
  const DataMixture data(c);
  EXPECT_EQ(data.sampling(0), data.natural());
  const auto p = data.target(0);
  const auto w = data.row_weights({0, 1, 1}, 0);
  EXPECT_NEAR(w[0], p[0] / 0.75, 1e-15);
  EXPECT_NEAR(w[1], p[1] / 0.25, 1e-15);
  EXPECT_NEAR(0.75 * w[0] + 0.25 * w[2], 1.0, 1e-15) << "weights average to 1 under q";
  EXPECT_EQ(DataMixture(mixture_config()).row_weights({0, 1}, 0), (std::vector<double>{1.0, 1.0}));
}

TEST(DataMixture, BadKeysAreNamed) {
  auto c = mixture_config();
  c.data.proportions = "1, 2, 3";
  expect_config_error(c, "data.proportions has 3 entries for 2 data.sources");
  c = mixture_config();
  c.data.proportions = "1, -2";
  expect_config_error(c, "data.proportions entry 2 ('-2')");
  c = tiny_config();
  c.data.mixing = "temperature";
  expect_config_error(c, "data.mixing=temperature needs data.sources");
  c = mixture_config("shuffle");
  expect_config_error(c, "data.mixing must be natural, temperature or upweight");
  c = mixture_config("temperature");
  c.data.temperature = "join(constant(peak=1), constant(peak=0), at=[5])";
  expect_config_error(c, "is 0 at step 5; it must stay > 0");
  c = mixture_config();
  c.data.sources = "one=" + small_corpus() + ", one=" + second_corpus();
  expect_config_error(c, "names 'one' twice");
  c = mixture_config();
  c.eval.sets = "heldout, one=" + second_corpus();
  expect_config_error(c, "eval.sets names 'one' twice ('heldout' with data.sources already evaluates each source's");
  c = mixture_config();
  c.eval.sets = "x=" + small_corpus() + ", x=" + second_corpus();
  try {  // a name given twice by hand: the word about 'heldout' was beside the point
    c.eval_sets();
    ADD_FAILURE() << "x twice was taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "eval.sets names 'x' twice");
  }
  c = mixture_config();
  c.data.sources = "justapath.txt";
  expect_config_error(c, "data.sources entry 1 ('justapath.txt') must be NAME=PATH");
  c = mixture_config("upweight");
  c.reweight.strategy = "linupper";
  expect_config_error(c, "two per-sample weightings");
  c = mixture_config();
  c.data.locality = 64;
  expect_config_error(c, "data.locality needs a single corpus");
  c = mixture_config();
  c.data.temperature = "nonsense(";
  expect_config_error(c, "data.temperature");
}

TEST(DataMixture, TrainingLogsTheMixtureAndEvaluatesEverySource) {
  TrainConfig c = mixture_config("temperature");
  c.train.steps = 12;
  c.data.temperature = "linear(peak=4, floor=1)";
  c.out = (lrkit::testing::scratch_dir() / "mixture_run").string();
  lrkit::testing::remove_tree(c.out);
  std::ostringstream progress;
  const auto summary = run_training(c, progress);
  EXPECT_EQ(summary.final_eval_losses.size(), 2u);
  EXPECT_TRUE(summary.final_eval_losses.count("one") && summary.final_eval_losses.count("two"));
  const auto log = summary.log_path;
  const auto tau = h5::read_series(log, "/data/temperature");
  const auto schedule = schedules::parse_schedule(c.data.temperature, 12);
  ASSERT_EQ(tau.size(), 12u);
  for (int64_t t = 0; t < 12; ++t) EXPECT_DOUBLE_EQ(tau[static_cast<size_t>(t)], schedule(t));
  const auto probability = h5::read_matrix(log, "/data/probability");
  const auto rows = h5::read_matrix(log, "/data/rows");
  ASSERT_EQ(probability.columns, 2);
  const DataMixture data(c);
  for (int64_t t = 0; t < 12; ++t) {
    EXPECT_NEAR(probability.at(t, 0) + probability.at(t, 1), 1.0, 1e-12);
    EXPECT_NEAR(probability.at(t, 1), data.target(t)[1], 1e-15);
    EXPECT_EQ(rows.at(t, 0) + rows.at(t, 1), c.train.batch);
  }
  EXPECT_GT(probability.at(0, 1), probability.at(11, 1)) << "tau 4 -> 1 moves mass back to the larger source";
}

TEST(DataMixture, UpweightingChangesTheUpdatesNotTheRows) {
  TrainConfig natural = mixture_config("natural");
  natural.train.steps = 6;
  natural.out = (lrkit::testing::scratch_dir() / "mix_natural").string();
  TrainConfig upweight = natural;
  upweight.data.mixing = "upweight";
  upweight.data.temperature = "constant(peak=5)";
  upweight.out = (lrkit::testing::scratch_dir() / "mix_upweight").string();
  std::ostringstream progress;
  for (const auto& c : {natural, upweight}) lrkit::testing::remove_tree(c.out);
  const auto a = run_training(natural, progress), b = run_training(upweight, progress);
  EXPECT_EQ(h5::read_matrix(a.log_path, "/data/rows").values, h5::read_matrix(b.log_path, "/data/rows").values);
  EXPECT_EQ(a.losses[0], b.losses[0]) << "same model, same rows: the logged loss is the plain mean";
  EXPECT_NE(a.losses[5], b.losses[5]) << "the weighted gradient trains differently";
}

}  // namespace
}  // namespace lrkit::train
