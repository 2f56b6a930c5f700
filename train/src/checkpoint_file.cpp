#include "checkpoint_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>

#include "lrkit/train/checkpoint.hpp"

namespace lrkit::train {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[] = "lrkit-checkpoint 2 ";
constexpr size_t kMaxHeader = 96;
constexpr int kSizeDigits = 20;  // any uint64_t

uint32_t crc32_update(uint32_t crc, const void* bytes, size_t size) {
  const auto* data = static_cast<const Bytef*>(bytes);
  uLong value = crc;
  while (size > 0) {  // zlib takes uInt lengths
    const auto chunk = static_cast<uInt>(std::min<size_t>(size, std::numeric_limits<uInt>::max()));
    value = crc32(value, data, chunk);
    data += chunk;
    size -= chunk;
  }
  return static_cast<uint32_t>(value);
}

std::string errno_text(int error) { return std::string(std::strerror(error)) + " (errno " + std::to_string(error) + ")"; }

// An open file descriptor closed on every path out.
struct Fd {
  int fd;
  explicit Fd(int f) : fd(f) {}
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
  int release() {
    const int f = fd;
    fd = -1;
    return f;
  }
};

// 0, or the errno of the first write that failed (a zero-byte write means no room).
int write_all(int fd, const void* bytes, size_t size, off_t at) {
  const char* data = static_cast<const char*>(bytes);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd, data, size, at);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? ENOSPC : errno;
    data += n;
    size -= static_cast<size_t>(n);
    at += n;
  }
  return 0;
}

std::string hex8(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

std::string header_line(uint32_t crc, uint64_t payload_size) {
  char size[32];
  std::snprintf(size, sizeof size, "%0*llu", kSizeDigits, static_cast<unsigned long long>(payload_size));
  return std::string(kMagic) + "crc32=" + hex8(crc) + " bytes=" + size + "\n";
}

// Streams the payload after room for its header, then writes the header: synced and closed. 0 or the errno of
// what failed; the payload's CRC-32 into `crc`.
int write_synced(const fs::path& path, const PayloadProducer& produce, uint32_t& crc) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.fd < 0) return errno;
  const auto header_size = static_cast<off_t>(header_line(0, 0).size());
  off_t at = header_size;
  int error = 0;
  crc = crc32_update(0, nullptr, 0);
  // After a failed write the rest of the payload is taken and dropped: LibTorch 1.13's writer met a short write
  // by throwing, and then again from its destructor, which ends the process (std::terminate).
  try {
    produce([&](const void* data, size_t size) -> size_t {
      if (data == nullptr) {  // LibTorch 2.x's writer skips a record's bytes so (a file writer seeks): zeros
        for (size_t left = size; left > 0;) {
          static const char kZeros[4096] = {};
          const size_t chunk = std::min(left, sizeof kZeros);
          crc = crc32_update(crc, kZeros, chunk);
          left -= chunk;
        }
        at += static_cast<off_t>(size);  // a hole in the file reads as zeros
        return size;
      }
      if (error == 0) error = write_all(fd.fd, data, size, at);
      if (error != 0) return size;
      crc = crc32_update(crc, data, size);
      at += static_cast<off_t>(size);
      return size;
    });
  } catch (...) {
    if (error != 0) return error;  // the write failed: its errno says why, not the writer's exception
    throw;
  }
  if (error != 0) return error;
  if (::ftruncate(fd.fd, at) != 0) return errno;  // a payload that ends in skipped bytes ends in a hole
  const std::string header = header_line(crc, static_cast<uint64_t>(at - header_size));
  if (const int failed = write_all(fd.fd, header.data(), header.size(), 0)) return failed;
  if (::fsync(fd.fd) != 0) return errno;
  if (::close(fd.release()) != 0) return errno;  // NFS and quotas report late
  return 0;
}

void sync_directory(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.fd < 0 || ::fsync(fd.fd) != 0)
    throw CheckpointWriteError("cannot sync checkpoint directory '" + dir.string() + "': " + errno_text(errno));
}

// Up to `size` bytes at `at` (fewer only at the end of the file); -1 with errno on a read error.
ssize_t read_at(int fd, void* buffer, size_t size, uint64_t at) {
  size_t got = 0;
  while (got < size) {
    const ssize_t n = ::pread(fd, static_cast<char*>(buffer) + got, size - got, static_cast<off_t>(at + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  return static_cast<ssize_t>(got);
}

}  // namespace

std::string format_checksum(uint32_t crc32) { return "crc32:" + hex8(crc32); }

uint32_t write_checkpoint_file(const fs::path& dir, const std::string& name, const PayloadProducer& produce) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointWriteError("cannot create checkpoint directory '" + dir.string() + "': " + ec.message());
  const fs::path final_path = dir / name;
  const fs::path temporary = dir / ("." + name + ".tmp");
  uint32_t crc = 0;
  int error = 0;
  try {
    error = write_synced(temporary, produce, crc);
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  if (error == 0 && ::rename(temporary.c_str(), final_path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw CheckpointWriteError("cannot write checkpoint '" + final_path.string() + "': " + errno_text(error));
  }
  sync_directory(dir);
  return crc;
}

CheckpointFile::CheckpointFile(const std::string& path) : path_(path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw CheckpointError("checkpoint '" + path + "' does not exist");
  if (!S_ISREG(info.st_mode)) throw CheckpointError("checkpoint '" + path + "' is not a regular file");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) throw CheckpointError("cannot open checkpoint '" + path + "': " + errno_text(errno));
  const auto read_error = [&] { return CheckpointError("cannot read checkpoint '" + path + "': " + errno_text(errno)); };
  struct stat opened {};
  if (::fstat(fd.fd, &opened) != 0) throw read_error();
  const auto file_size = static_cast<uint64_t>(opened.st_size);

  std::string start(kMaxHeader + 1, '\0');
  const ssize_t got = read_at(fd.fd, start.data(), start.size(), 0);
  if (got < 0) throw read_error();
  start.resize(static_cast<size_t>(got));
  const size_t newline = start.find('\n');
  if (start.compare(0, sizeof kMagic - 1, kMagic) != 0 || newline == std::string::npos || newline > kMaxHeader)
    throw CheckpointError("'" + path + "' is not an lrkit checkpoint (no 'lrkit-checkpoint 2' header)");
  unsigned stored = 0;
  unsigned long long bytes = 0;
  int used = 0;
  const std::string header = start.substr(0, newline);
  if (std::sscanf(header.c_str() + sizeof kMagic - 1, "crc32=%8x bytes=%llu%n", &stored, &bytes, &used) != 2 ||
      used != static_cast<int>(header.size() - (sizeof kMagic - 1)))
    throw CheckpointError("checkpoint '" + path + "' has a damaged header: '" + header + "'");
  payload_offset_ = newline + 1;
  payload_size_ = file_size - payload_offset_;
  if (payload_size_ != bytes)
    throw CheckpointError("checkpoint '" + path + "' is truncated or extended: " + std::to_string(payload_size_) +
                          " payload bytes, the header says " + std::to_string(bytes));
  std::string chunk(size_t{8} << 20, '\0');
  uint32_t crc = crc32_update(0, nullptr, 0);
  for (uint64_t at = 0; at < payload_size_;) {
    const ssize_t n = read_at(fd.fd, chunk.data(), static_cast<size_t>(std::min<uint64_t>(chunk.size(), payload_size_ - at)),
                              payload_offset_ + at);
    if (n < 0) throw read_error();
    if (n == 0)
      throw CheckpointError("checkpoint '" + path + "' is truncated or extended: " + std::to_string(at) +
                            " payload bytes, the header says " + std::to_string(bytes));
    crc = crc32_update(crc, chunk.data(), static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  crc32_ = crc;
  if (crc32_ != stored)
    throw CheckpointError("checkpoint '" + path + "' is damaged: its payload's " + format_checksum(crc32_) +
                          " differs from the " + format_checksum(stored) + " written with it");
  fd_ = fd.release();
}

CheckpointFile::~CheckpointFile() {
  if (fd_ >= 0) ::close(fd_);
}

size_t CheckpointFile::read(uint64_t position, void* buffer, size_t size) const {
  if (position >= payload_size_) return 0;
  const ssize_t n = read_at(fd_, buffer, static_cast<size_t>(std::min<uint64_t>(size, payload_size_ - position)),
                            payload_offset_ + position);
  return n < 0 ? 0 : static_cast<size_t>(n);
}

}  // namespace lrkit::train
