// Training data from one corpus or a mixture of several (ALGORITHMS.md
// section 8, Li et al. 2024). Sources have proportions q_i (their training
// sizes unless given); rows are drawn from q ("natural"), from the temperature
// distribution p_i(tau) = q_i^(1/tau) / sum_j q_j^(1/tau) ("temperature"), or
// from q with each row's loss weighted by p_i / q_i ("upweight"). tau follows
// any lrkit schedule over the run, so it can be lowered as training ends
// ("Cooldown"). Replay of old data in continual pre-training is a mixture
// with a small fixed proportion of the old corpus.
//
// Which source row j of step s comes from, and where in it, is a pure function
// of (seed, s, j): resumed runs and any split over ranks and micro-batches read
// the same rows. One source reads exactly what sample_batch reads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lrkit/schedules/schedule.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/train_config.hpp"

namespace lrkit::train {

struct MixedBatch {
  Batch batch;
  std::vector<int64_t> source;  // per row
};

class DataMixture {
 public:
  // Loads every source of c.data (or c.data.path alone). Throws CorpusError
  // naming a file that is missing or too small, std::invalid_argument naming
  // a bad temperature value and its step.
  explicit DataMixture(const TrainConfig& c);

  size_t size() const { return corpora_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  const ByteCorpus& corpus(size_t i) const { return corpora_[i]; }
  // Every source's ByteCorpus::require_whole: once per step, before its batches are read.
  void require_whole() const;
  // The first source's ByteCorpus::change, if any, as "data file 'PATH' changed ...".
  std::optional<std::string> change() const;
  const std::vector<double>& natural() const { return natural_; }  // q
  bool upweighting() const { return mixing_ == Mixing::upweight; }
  double temperature(int64_t step) const { return temperature_(step); }
  // p(tau(step)): the distribution training aims at.
  std::vector<double> target(int64_t step) const;
  // The distribution rows are drawn from at `step`: p(tau) for temperature, q otherwise.
  std::vector<double> sampling(int64_t step) const;
  // Rows first_row .. first_row + rows - 1 of the step's global batch.
  MixedBatch sample(int64_t first_row, int64_t rows, int64_t context, const BatchKey& key,
                    const std::vector<double>& sampling) const;
  // How many of the global batch's `rows` rows each source supplies at this key.
  std::vector<int64_t> rows_per_source(int64_t rows, const BatchKey& key, const std::vector<double>& sampling) const;
  // Upweighting: each row's loss weight p_s / q_s at `step` (all 1 otherwise).
  std::vector<double> row_weights(const std::vector<int64_t>& source, int64_t step) const;
  std::string describe() const;

 private:
  std::vector<std::string> names_;
  std::vector<ByteCorpus> corpora_;
  std::vector<double> natural_;
  Choice<Mixing> mixing_;
  schedules::Schedule temperature_;
};

}  // namespace lrkit::train
