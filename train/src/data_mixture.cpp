#include "lrkit/train/data_mixture.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "lrkit/common/numbers.hpp"
#include "lrkit/reweight/source_mixture.hpp"
#include "lrkit/schedules/factory.hpp"

namespace lrkit::train {

namespace {

constexpr uint64_t kSourceStream = 0x632be59bd9b4e019ULL;  // row_draw stream that picks a row's source

// Index of the source a uniform draw u in [0, 1) falls into.
size_t pick_source(double u, const std::vector<double>& probabilities) {
  double cumulative = 0.0;
  for (size_t i = 0; i + 1 < probabilities.size(); ++i) {
    cumulative += probabilities[i];
    if (u < cumulative) return i;
  }
  return probabilities.size() - 1;
}

double unit_interval(uint64_t draw) { return static_cast<double>(draw >> 11) * 0x1.0p-53; }

}  // namespace

DataMixture::DataMixture(const TrainConfig& c)
    : mixing_(c.data.mixing), temperature_(schedules::parse_schedule(c.data.temperature, c.train.steps)) {
  for (const auto& source : c.data_sources()) {
    names_.push_back(source.name);
    corpora_.push_back(ByteCorpus::load(source.path, c.data.heldout, c.model.context));
  }
  const auto given = c.data_proportions();
  for (size_t i = 0; i < corpora_.size(); ++i)
    natural_.push_back(given.empty() ? static_cast<double>(corpora_[i].train().size()) : given[i]);
  // Proportions near the double's limit (1e308 each) overflowed their sum and every q became 0: such are summed
  // relative to the largest.
  double total = 0.0;
  for (const double q : natural_) total += q;
  if (!std::isfinite(total)) {
    const double largest = *std::max_element(natural_.begin(), natural_.end());
    total = 0.0;
    for (auto& q : natural_) total += (q /= largest);
  }
  for (auto& q : natural_) q /= total;
  if (corpora_.size() > 1)
    for (int64_t step = 0; step < c.train.steps; ++step) {
      const double tau = temperature_(step);
      if (!(tau > 0) || !std::isfinite(tau))
        throw std::invalid_argument("data.temperature '" + c.data.temperature + "' is " + format_number(tau) + " at step " +
                                    std::to_string(step) + "; it must stay > 0");
    }
}

std::vector<double> DataMixture::target(int64_t step) const {
  return mixing_ == Mixing::natural ? natural_ : reweight::temperature_probabilities(natural_, temperature_(step));
}

void DataMixture::require_whole() const {
  for (const auto& corpus : corpora_) corpus.require_whole();
}

std::optional<std::string> DataMixture::change() const {
  for (const auto& corpus : corpora_)
    if (auto change = corpus.change()) return "data " + *change;
  return std::nullopt;
}

std::vector<double> DataMixture::sampling(int64_t step) const {
  return mixing_ == Mixing::temperature ? target(step) : natural_;
}

MixedBatch DataMixture::sample(int64_t first_row, int64_t rows, int64_t context, const BatchKey& key,
                               const std::vector<double>& sampling) const {
  if (corpora_.size() == 1)
    return {sample_batch(corpora_[0].train(), first_row, rows, context, key), std::vector<int64_t>(static_cast<size_t>(rows), 0)};
  MixedBatch out;
  std::vector<ByteView> tokens;
  std::vector<int64_t> offsets;
  for (int64_t r = 0; r < rows; ++r) {
    const auto s = pick_source(unit_interval(row_draw(key, first_row + r, kSourceStream)), sampling);
    const ByteView source = corpora_[s].train();
    const auto span = static_cast<uint64_t>(source.size()) - static_cast<uint64_t>(context);
    out.source.push_back(static_cast<int64_t>(s));
    tokens.push_back(source);
    offsets.push_back(static_cast<int64_t>(row_draw(key, first_row + r, 0) % span));
  }
  out.batch = token_windows(tokens, offsets, context);
  return out;
}

std::vector<int64_t> DataMixture::rows_per_source(int64_t rows, const BatchKey& key, const std::vector<double>& sampling) const {
  std::vector<int64_t> counts(corpora_.size(), 0);
  for (int64_t r = 0; r < rows; ++r)
    ++counts[corpora_.size() == 1 ? 0 : pick_source(unit_interval(row_draw(key, r, kSourceStream)), sampling)];
  return counts;
}

std::vector<double> DataMixture::row_weights(const std::vector<int64_t>& source, int64_t step) const {
  std::vector<double> weights(source.size(), 1.0);
  if (!upweighting()) return weights;
  const auto p = target(step);
  for (size_t r = 0; r < source.size(); ++r) {
    const auto s = static_cast<size_t>(source[r]);
    weights[r] = p[s] / natural_[s];
  }
  return weights;
}

std::string DataMixture::describe() const {
  if (corpora_.size() == 1) return corpora_[0].path();
  std::ostringstream text;
  text << "a mixture (" << mixing_.text() << ") of";
  for (size_t i = 0; i < corpora_.size(); ++i)
    text << (i ? ", " : " ") << names_[i] << "=" << corpora_[i].path() << " (q " << natural_[i] << ")";
  return text.str();
}

}  // namespace lrkit::train
