// The file around a checkpoint's payload (a LibTorch archive): one header line
// "lrkit-checkpoint 2 crc32=<8 hex digits> bytes=<payload size>", then the
// payload. Written atomically (temporary file, fsync, rename, fsync of the
// directory); read back only when its size and CRC-32 match the header.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace lrkit::train {

struct CheckpointPayload {
  std::string bytes;
  uint32_t crc32 = 0;
};

// Writes dir/name; a failure (disk full, quota, permissions) throws
// CheckpointError naming the file and the errno, and leaves no temporary file
// behind. Returns the payload's CRC-32.
uint32_t write_checkpoint_file(const std::filesystem::path& dir, const std::string& name, const std::string& payload);

// Reads and verifies a file written by write_checkpoint_file; throws
// CheckpointError naming the file when it is not a regular file, not a
// checkpoint, truncated, or fails its checksum.
CheckpointPayload read_checkpoint_file(const std::string& path);

}  // namespace lrkit::train
