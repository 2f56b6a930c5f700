#include "file_contents.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>

#include "lrkit/train/checkpoint.hpp"

namespace lrkit::train {

namespace {

constexpr int64_t kBlock = 4096;
constexpr int64_t kBlocks = 64;

// Closes the descriptor on every way out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Reads `size` bytes at `offset` into `out` through a short read or an interrupt; false on an error or early end.
bool read_at(int fd, uint8_t* out, int64_t size, int64_t offset) {
  while (size > 0) {
    const ssize_t got = ::pread(fd, out, static_cast<size_t>(size), offset);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    out += got;
    size -= got;
    offset += got;
  }
  return true;
}

}  // namespace

std::optional<std::string> file_contents(const std::string& path) {
  // O_NONBLOCK: a named pipe opened for reading would wait for a writer; opened at once, fstat tells it is no file.
  // On a regular file the flag changes nothing.
  const Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) return std::nullopt;
  return descriptor_contents(file.fd);
}

std::optional<std::string> descriptor_contents(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  const int64_t size = info.st_size;
  // The size first: files that agree on every sampled block but differ in length differ.
  uint8_t size_bytes[8];
  for (int i = 0; i < 8; ++i) size_bytes[i] = static_cast<uint8_t>(static_cast<uint64_t>(size) >> (8 * i));
  uLong crc = crc32(0L, size_bytes, sizeof size_bytes);
  std::array<uint8_t, kBlock> block{};
  if (size <= kBlock * kBlocks) {
    for (int64_t offset = 0; offset < size; offset += kBlock) {
      const int64_t length = std::min(kBlock, size - offset);
      if (!read_at(fd, block.data(), length, offset)) return std::nullopt;
      crc = crc32(crc, block.data(), static_cast<uInt>(length));
    }
  } else {
    for (int64_t i = 0; i < kBlocks; ++i) {
      const int64_t offset = i * (size - kBlock) / (kBlocks - 1);  // 0 .. size - kBlock: the first and the last
      if (!read_at(fd, block.data(), kBlock, offset)) return std::nullopt;
      crc = crc32(crc, block.data(), static_cast<uInt>(kBlock));
    }
  }
  return std::to_string(size) + " bytes, sampled " + format_checksum(static_cast<uint32_t>(crc));
}

std::vector<std::pair<std::string, std::string>> run_files_read(const TrainConfig& config) {
  std::vector<std::pair<std::string, std::string>> files;
  if (config.data.sources.empty()) {
    files.emplace_back("data.path", config.data.path);
  } else {
    for (const auto& source : config.data_sources()) files.emplace_back("data.sources " + source.name, source.path);
  }
  // With a mixture, `heldout` stands for a set per source, at the source's path: each file is compared once.
  const auto listed = [&](const std::string& path) {
    return std::any_of(files.begin(), files.end(), [&](const auto& file) { return file.second == path; });
  };
  for (const auto& set : config.eval_sets())
    if (!set.path.empty() && !listed(set.path)) files.emplace_back("eval.sets " + set.name, set.path);
  return files;
}

}  // namespace lrkit::train
