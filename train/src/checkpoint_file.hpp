// The file around a checkpoint's payload (a LibTorch archive): one header line
// "lrkit-checkpoint 2 crc32=<8 hex digits> bytes=<payload size>", then the
// payload. Written atomically (temporary file, fsync, rename, fsync of the
// directory); read back only when its size and CRC-32 match the header.
// Neither side holds the payload whole in memory: it is streamed to the file
// as LibTorch serializes it (its size written zero-padded to 20 digits, so the
// header keeps its length when filled in at the end), and read back from the
// file at the positions LibTorch asks for. A payload held in memory cost up to
// three copies of the model's state at each checkpoint (measured: 201M
// parameters trained at 3.4 GB resident and peaked at 8.1 GB writing one), and
// a run that trained killed by the kernel when it saved.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

namespace lrkit::train {

// Takes the next `size` bytes of the payload and returns `size`: a failed write is reported once the payload
// has been streamed whole.
using ChunkWriter = std::function<size_t(const void* data, size_t size)>;
// Streams the whole payload to the writer it is given, as OutputArchive::save_to(func) does.
using PayloadProducer = std::function<void(const ChunkWriter& write)>;

// Writes dir/name with the payload `produce` streams; a failure (disk full, quota, permissions) throws
// CheckpointWriteError naming the file and the errno, and leaves no temporary file behind. An exception of
// `produce` that no failed write caused passes on. Returns the payload's CRC-32.
uint32_t write_checkpoint_file(const std::filesystem::path& dir, const std::string& name, const PayloadProducer& produce);

// A checkpoint file written by write_checkpoint_file, opened and verified: its whole payload read once for its
// size and CRC-32. Reads of the payload then come from the file opened here (a file renamed over it meanwhile
// changes nothing). Throws CheckpointError naming the file when it is not a regular file, not a checkpoint,
// truncated, or fails its checksum.
class CheckpointFile {
 public:
  explicit CheckpointFile(const std::string& path);
  ~CheckpointFile();
  CheckpointFile(const CheckpointFile&) = delete;
  CheckpointFile& operator=(const CheckpointFile&) = delete;

  uint32_t crc32() const { return crc32_; }
  uint64_t payload_size() const { return payload_size_; }
  // Up to `size` payload bytes from `position` into `buffer`; fewer at the end or on a read error (as
  // InputArchive::load_from's read function).
  size_t read(uint64_t position, void* buffer, size_t size) const;

 private:
  std::string path_;
  int fd_ = -1;
  uint64_t payload_offset_ = 0, payload_size_ = 0;
  uint32_t crc32_ = 0;
};

}  // namespace lrkit::train
