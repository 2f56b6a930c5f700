// A data file mapped read-only. Its pages are the page cache's, so the workers of one machine read one copy and
// a corpus larger than memory is paged, where each worker used to hold it whole (twice while it loaded). A file
// cut short under the mapping would end the process with SIGBUS at the first read past its new end: `require_whole`
// names that between steps, and a process-wide SIGBUS handler names the file for a read that races the cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "lrkit/train/byte_corpus.hpp"  // DataFileChangedError

namespace lrkit::train {

class MappedFile {
 public:
  // Throws CorpusError naming the file when it cannot be opened or mapped.
  explicit MappedFile(const std::string& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const uint8_t* bytes() const { return bytes_; }
  size_t size() const { return size_; }
  // Throws DataFileChangedError when the mapped file is shorter now than when it was mapped.
  void require_whole() const;
  // What was written into the mapped file since it was mapped (its sampled contents then and now, file_contents.hpp):
  // the pages of a file rewritten in place change under the mapping, so the run reads the new bytes with the old.
  // Nothing while it holds what it held. A file replaced by another under its name is not this one: its mapping keeps
  // the old bytes.
  std::optional<std::string> change() const;

 private:
  std::string path_;
  int fd_ = -1;  // kept open: fstat sees the mapped file even after a rename replaced its name
  const uint8_t* bytes_ = nullptr;
  size_t size_ = 0;
  int slot_ = -1;  // in the SIGBUS handler's table
  std::string contents_;  // when it was mapped
};

}  // namespace lrkit::train
