// A text corpus as byte tokens (vocabulary 256) with a contiguous held-out
// tail, and deterministic batch sampling: sequence j of the global batch of
// step s is a pure function of (seed, s, j). A resumed run reads exactly the
// data the uninterrupted run would have, and any split of the global batch
// over micro-batches or ranks reads the same sequences.
#pragma once

#include <torch/torch.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::train {

class CorpusError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A data file changed under a run (cut short, rewritten in place): a failure at run time, not bad input. An empty
// message: another worker reports it.
class DataFileChangedError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct BatchKey {
  uint64_t seed = 0;
  int64_t step = 0;
  // 0: windows from anywhere in the corpus. L > 0: a document-ordered stream,
  // every row of the step drawn from one region of L bytes chosen by (seed, step),
  // so ranks that share a seed read related text and a rank with its own seed does not.
  int64_t locality = 0;
};

// A read-only run of byte tokens: part of a mapped corpus file, or a vector's bytes (the vector must outlive it).
class ByteView {
 public:
  ByteView() = default;
  ByteView(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  // Implicit, so that a vector of bytes (a test's corpus) goes wherever a view does.
  ByteView(const std::vector<uint8_t>& bytes) : data_(bytes.data()), size_(bytes.size()) {}  // NOLINT
  size_t size() const { return size_; }
  const uint8_t* data() const { return data_; }
  uint8_t operator[](size_t i) const { return data_[i]; }

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

class MappedFile;

class ByteCorpus {
 public:
  // Maps any file read-only as bytes (train/src/mapped_file.hpp); the last `heldout_fraction` becomes the held-out
  // split. The workers of one machine share the file's pages instead of each holding a copy, and a copy of a
  // ByteCorpus shares its mapping. Throws CorpusError naming the file when it is missing or too small for `context`.
  static ByteCorpus load(const std::string& path, double heldout_fraction, int64_t context);
  // What load checks, without reading the file: a regular file large enough for `context` on both sides of the
  // held-out split. Throws CorpusError naming the file.
  static void check(const std::string& path, double heldout_fraction, int64_t context);

  // Throws DataFileChangedError when the file was cut short since it was mapped (a read past its new end would
  // end the process with SIGBUS): call it before reading, once per step.
  void require_whole() const;
  // "file 'PATH' changed while the run read it (... when the run started, ... now)" where the file was rewritten
  // in place since it was mapped (its sampled contents, train/src/file_contents.hpp); nothing while it is unchanged.
  std::optional<std::string> change() const;

  ByteView train() const { return train_; }
  ByteView heldout() const { return heldout_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::shared_ptr<const MappedFile> file_;  // keeps the views' bytes mapped
  ByteView train_, heldout_;
};

struct Batch {
  torch::Tensor inputs;   // [batch, context] int64
  torch::Tensor targets;  // inputs shifted by one
};

// Sequences first_row .. first_row + rows - 1 of the step's global batch.
Batch sample_batch(ByteView tokens, int64_t first_row, int64_t rows, int64_t context,
                   const BatchKey& key);
// The pseudo-random 64-bit draw behind row `row` of the step's global batch;
// `stream` 0 is the window offset sample_batch uses, others are independent.
uint64_t row_draw(const BatchKey& key, int64_t row, uint64_t stream);
// Rows of context + 1 tokens: row r from tokens[r] at offsets[r].
Batch token_windows(const std::vector<ByteView>& tokens, const std::vector<int64_t>& offsets, int64_t context);
// Windows at fixed, evenly spaced offsets: the same evaluation set every time.
Batch evaluation_batch(ByteView tokens, int64_t rows, int64_t context, int64_t index, int64_t count);

}  // namespace lrkit::train
