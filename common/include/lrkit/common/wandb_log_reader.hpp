// The records of a Weights & Biases run log (the run-ID.wandb file that every W&B run, online or offline, writes in
// its directory wandb/run-DATE-ID/): a 7-byte header (":W&B", the magic 0xBEE1, version 0), then LevelDB's log
// format, whose 32 KiB blocks count from the file's first byte. Each chunk is the CRC-32 (zlib's, where LevelDB has
// CRC-32C) of its type byte and data, its length (16 bits), its type and its data. A record is one FULL chunk, or a
// FIRST, MIDDLE ones and a LAST; a chunk never crosses a block, and a block's last bytes, too few for a chunk's
// header, are zeros. As wandb/sdk/internal/datastore.py and core/pkg/leveldb write and read it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

namespace lrkit {

// What is wrong with a W&B run log, a record in it or a directory of runs, naming the file (and the byte).
class WandbLogError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Whether the file begins with W&B's header (any version: the reader names one it does not read).
bool is_wandb_file(const std::string& path);

// Reads the records one by one, up to the size the file had when opened (a run still writing it appends). A record
// the file ends inside (a writer killed, or still writing) ends the records: those before it are whole. Throws
// WandbLogError naming the file: a header of another version, and a damaged chunk with its byte offset.
class WandbLogReader {
 public:
  explicit WandbLogReader(const std::string& path);
  // The next record's data, false after the last whole record.
  bool next(std::string& record);
  // Where the record that next() returned last begins.
  uint64_t record_offset() const { return record_offset_; }

 private:
  static constexpr size_t kBlockBytes = 32768, kChunkHeaderBytes = 7;
  // The next block into block_; false at the end of the file.
  bool load_block();

  std::string path_;
  std::ifstream in_;
  uint64_t size_ = 0, block_start_ = 0, record_offset_ = 0;
  std::array<unsigned char, kBlockBytes> block_{};
  // The block's bytes read (fewer than kBlockBytes: the file's last block), and where the next chunk starts in it.
  size_t block_bytes_ = 0, at_ = 0;
  bool cut_ = false;                 // the file ended inside a record: nothing more to read
};

}  // namespace lrkit
