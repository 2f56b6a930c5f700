#include "lrkit/train/byte_corpus.hpp"

#include <algorithm>
#include <filesystem>

#include "lrkit/common/numbers.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/train/rank_streams.hpp"
#include "mapped_file.hpp"

namespace lrkit::train {

namespace {

uint64_t mix(uint64_t x) { return derive_seed(x, 0); }

uint64_t step_key(const BatchKey& key) { return mix(mix(key.seed) ^ static_cast<uint64_t>(key.step)); }

Batch windows(ByteView tokens, int64_t context, const std::vector<int64_t>& offsets) {
  return token_windows(std::vector<ByteView>(offsets.size(), tokens), offsets, context);
}

}  // namespace

uint64_t row_draw(const BatchKey& key, int64_t row, uint64_t stream) {
  const uint64_t draw = mix(step_key(key) ^ static_cast<uint64_t>(row));
  return stream == 0 ? draw : mix(draw ^ stream);
}

Batch token_windows(const std::vector<ByteView>& tokens, const std::vector<int64_t>& offsets, int64_t context) {
  const auto rows = static_cast<int64_t>(offsets.size());
  auto data = torch::empty({rows, context + 1}, torch::kLong);
  auto* out = data.data_ptr<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* window = tokens[static_cast<size_t>(r)].data() + offsets[static_cast<size_t>(r)];
    std::copy(window, window + context + 1, out + r * (context + 1));
  }
  using torch::indexing::Slice;
  return {data.index({Slice(), Slice(0, context)}).contiguous(), data.index({Slice(), Slice(1, context + 1)}).contiguous()};
}

namespace {

void require_room_for_both_splits(const std::string& path, uintmax_t bytes, double heldout_fraction, int64_t context) {
  const auto held = static_cast<uintmax_t>(static_cast<double>(bytes) * heldout_fraction);
  const auto needed = static_cast<uintmax_t>(context + 2);
  if (held < needed || bytes - held < needed)
    throw CorpusError("data file '" + path + "' has " + std::to_string(bytes) + " bytes: too small for context " +
                      std::to_string(context) + " with a held-out split of " + format_number(heldout_fraction));
}

// The bundled corpus that scripts/prepare_data.sh writes (data/kjv.txt); the hint to run it means nothing for
// a file of the user's own.
bool is_default_corpus(const std::string& path) { return std::filesystem::path(path).filename() == "kjv.txt"; }

}  // namespace

void ByteCorpus::check(const std::string& path, double heldout_fraction, int64_t context) {
  if (!(heldout_fraction > 0.0 && heldout_fraction < 0.5))
    throw CorpusError("data.heldout must be in (0, 0.5) (got " + format_number(heldout_fraction) + ")");
  if (const auto problem = input_file_problem(path))
    throw CorpusError("data file " + *problem + (is_default_corpus(path) && !std::filesystem::exists(path)
                                                       ? ": prepare the default corpus with scripts/prepare_data.sh"
                                                       : ""));
  require_room_for_both_splits(path, std::filesystem::file_size(path), heldout_fraction, context);
}

ByteCorpus ByteCorpus::load(const std::string& path, double heldout_fraction, int64_t context) {
  check(path, heldout_fraction, context);
  auto file = std::make_shared<const MappedFile>(path);
  const size_t size = file->size();
  require_room_for_both_splits(path, size, heldout_fraction, context);  // what was mapped, should the file have changed
  const auto held = static_cast<size_t>(static_cast<double>(size) * heldout_fraction);
  ByteCorpus corpus;
  corpus.path_ = path;
  corpus.train_ = ByteView(file->bytes(), size - held);
  corpus.heldout_ = ByteView(file->bytes() + (size - held), held);
  corpus.file_ = std::move(file);
  return corpus;
}

void ByteCorpus::require_whole() const { file_->require_whole(); }

std::optional<std::string> ByteCorpus::change() const {
  const auto change = file_->change();
  if (!change) return std::nullopt;
  return "file '" + path_ + "' changed while the run read it (" + *change + ")";
}

Batch sample_batch(ByteView tokens, int64_t first_row, int64_t rows, int64_t context,
                   const BatchKey& key) {
  const auto span = static_cast<uint64_t>(tokens.size()) - static_cast<uint64_t>(context);
  uint64_t region_start = 0, region = span;
  if (key.locality > 0 && static_cast<uint64_t>(key.locality) < span) {
    region = static_cast<uint64_t>(key.locality);
    region_start = (mix(step_key(key) ^ 0x5bd1e995ULL) % (span / region)) * region;
  }
  std::vector<int64_t> offsets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    offsets[static_cast<size_t>(r)] =
        static_cast<int64_t>(region_start + row_draw(key, first_row + r, 0) % region);
  return windows(tokens, context, offsets);
}

Batch evaluation_batch(ByteView tokens, int64_t rows, int64_t context, int64_t index, int64_t count) {
  const int64_t span = static_cast<int64_t>(tokens.size()) - context - 1;
  std::vector<int64_t> offsets(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) offsets[static_cast<size_t>(r)] = span * (index * rows + r) / std::max<int64_t>(count * rows, 1);
  return windows(tokens, context, offsets);
}

}  // namespace lrkit::train
