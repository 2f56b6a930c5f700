#include "checkpoint_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

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

uint32_t crc32_of(const std::string& bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  const auto* data = reinterpret_cast<const Bytef*>(bytes.data());
  size_t left = bytes.size();
  while (left > 0) {  // zlib takes uInt lengths
    const auto chunk = static_cast<uInt>(std::min<size_t>(left, std::numeric_limits<uInt>::max()));
    crc = crc32(crc, data, chunk);
    data += chunk;
    left -= chunk;
  }
  return static_cast<uint32_t>(crc);
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
int write_all(int fd, const std::string& bytes) {
  const char* data = bytes.data();
  size_t size = bytes.size();
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n == 0 ? ENOSPC : errno;
    data += n;
    size -= static_cast<size_t>(n);
  }
  return 0;
}

// Writes header + payload to `path`, synced and closed; 0 or the errno of what failed.
int write_synced(const fs::path& path, const std::string& header, const std::string& payload) {
  Fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (fd.fd < 0) return errno;
  if (const int error = write_all(fd.fd, header)) return error;
  if (const int error = write_all(fd.fd, payload)) return error;
  if (::fsync(fd.fd) != 0) return errno;
  if (::close(fd.release()) != 0) return errno;  // NFS and quotas report late
  return 0;
}

std::string hex8(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "%08x", value);
  return text;
}

void sync_directory(const fs::path& dir) {
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.fd < 0 || ::fsync(fd.fd) != 0)
    throw CheckpointWriteError("cannot sync checkpoint directory '" + dir.string() + "': " + errno_text(errno));
}

}  // namespace

std::string format_checksum(uint32_t crc32) { return "crc32:" + hex8(crc32); }

uint32_t write_checkpoint_file(const fs::path& dir, const std::string& name, const std::string& payload) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw CheckpointWriteError("cannot create checkpoint directory '" + dir.string() + "': " + ec.message());
  const fs::path final_path = dir / name;
  const fs::path temporary = dir / ("." + name + ".tmp");
  const uint32_t crc = crc32_of(payload);
  const std::string header = std::string(kMagic) + "crc32=" + hex8(crc) + " bytes=" + std::to_string(payload.size()) + "\n";
  int error = write_synced(temporary, header, payload);
  if (error == 0 && ::rename(temporary.c_str(), final_path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    throw CheckpointWriteError("cannot write checkpoint '" + final_path.string() + "': " + errno_text(error));
  }
  sync_directory(dir);
  return crc;
}

CheckpointPayload read_checkpoint_file(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) throw CheckpointError("checkpoint '" + path + "' does not exist");
  if (!S_ISREG(info.st_mode)) throw CheckpointError("checkpoint '" + path + "' is not a regular file");
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.fd < 0) throw CheckpointError("cannot open checkpoint '" + path + "': " + errno_text(errno));
  const auto file_size = static_cast<size_t>(info.st_size);
  std::string contents(file_size, '\0');
  size_t got = 0;
  while (got < file_size) {
    const ssize_t n = ::read(fd.fd, contents.data() + got, file_size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw CheckpointError("cannot read checkpoint '" + path + "': " + errno_text(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  contents.resize(got);

  const size_t newline = contents.find('\n');
  if (contents.compare(0, sizeof kMagic - 1, kMagic) != 0 || newline == std::string::npos || newline > kMaxHeader)
    throw CheckpointError("'" + path + "' is not an lrkit checkpoint (no 'lrkit-checkpoint 2' header)");
  unsigned stored = 0;
  unsigned long long bytes = 0;
  int used = 0;
  const std::string header = contents.substr(0, newline);
  if (std::sscanf(header.c_str() + sizeof kMagic - 1, "crc32=%8x bytes=%llu%n", &stored, &bytes, &used) != 2 ||
      used != static_cast<int>(header.size() - (sizeof kMagic - 1)))
    throw CheckpointError("checkpoint '" + path + "' has a damaged header: '" + header + "'");
  CheckpointPayload payload;
  payload.bytes = std::move(contents);
  payload.bytes.erase(0, newline + 1);
  if (payload.bytes.size() != bytes)
    throw CheckpointError("checkpoint '" + path + "' is truncated or extended: " + std::to_string(payload.bytes.size()) +
                          " payload bytes, the header says " + std::to_string(bytes));
  payload.crc32 = crc32_of(payload.bytes);
  if (payload.crc32 != stored)
    throw CheckpointError("checkpoint '" + path + "' is damaged: its payload's " + format_checksum(payload.crc32) +
                          " differs from the " + format_checksum(stored) + " written with it");
  return payload;
}

}  // namespace lrkit::train
