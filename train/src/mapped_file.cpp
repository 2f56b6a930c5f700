#include "mapped_file.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "file_contents.hpp"
#include "lrkit/train/byte_corpus.hpp"

namespace lrkit::train {

namespace {

// The mappings the SIGBUS handler can name: fixed storage, as a handler may not allocate. A slot is published by
// its `end` (release) after its other fields, and retired by zeroing `end`.
struct Slot {
  std::atomic<uintptr_t> begin{0};
  std::atomic<uintptr_t> end{0};
  char message[512] = {};
};
constexpr int kSlots = 64;
Slot g_slots[kSlots];
std::mutex g_slots_mutex;
struct sigaction g_previous_bus_action {};

void on_bus_error(int signal, siginfo_t* info, void* context) {
  const auto address = reinterpret_cast<uintptr_t>(info->si_addr);
  for (const Slot& slot : g_slots) {
    const uintptr_t end = slot.end.load(std::memory_order_acquire);
    if (end != 0 && address >= slot.begin.load(std::memory_order_relaxed) && address < end) {
      const ssize_t written = ::write(STDERR_FILENO, slot.message, std::strlen(slot.message));
      (void)written;
      ::_exit(1);
    }
  }
  // Not a read of a data file: what would have happened without this handler.
  if (g_previous_bus_action.sa_flags & SA_SIGINFO) {
    if (g_previous_bus_action.sa_sigaction) return g_previous_bus_action.sa_sigaction(signal, info, context);
  } else if (g_previous_bus_action.sa_handler != SIG_DFL && g_previous_bus_action.sa_handler != SIG_IGN) {
    return g_previous_bus_action.sa_handler(signal);
  }
  ::signal(SIGBUS, SIG_DFL);
  ::raise(SIGBUS);
}

int publish(const uint8_t* bytes, size_t size, const std::string& path) {
  std::lock_guard<std::mutex> lock(g_slots_mutex);
  static const bool installed = [] {
    struct sigaction action {};
    action.sa_sigaction = on_bus_error;
    action.sa_flags = SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    return ::sigaction(SIGBUS, &action, &g_previous_bus_action) == 0;
  }();
  if (!installed) return -1;
  for (int i = 0; i < kSlots; ++i) {
    Slot& slot = g_slots[i];
    if (slot.end.load(std::memory_order_relaxed) != 0) continue;
    const std::string message = "lrkit: data file '" + path + "' was cut short while the run read it (bus error " +
                                "past its new end): the run log and checkpoints written so far are kept; restore the " +
                                "file and continue with --resume auto\n";
    std::strncpy(slot.message, message.c_str(), sizeof slot.message - 1);
    slot.begin.store(reinterpret_cast<uintptr_t>(bytes), std::memory_order_relaxed);
    slot.end.store(reinterpret_cast<uintptr_t>(bytes) + size, std::memory_order_release);
    return i;
  }
  return -1;  // more mappings than slots: such a read ends as a plain bus error
}

}  // namespace

MappedFile::MappedFile(const std::string& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw CorpusError("cannot open data file '" + path + "': " + std::strerror(errno));
  struct stat info {};
  if (::fstat(fd_, &info) != 0 || info.st_size <= 0) {
    ::close(fd_);
    throw CorpusError("data file '" + path + "' is empty or its size cannot be read");
  }
  size_ = static_cast<size_t>(info.st_size);
  void* mapped = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd_, 0);
  if (mapped == MAP_FAILED) {
    const int error = errno;
    ::close(fd_);
    throw CorpusError("cannot map data file '" + path + "': " + std::strerror(error));
  }
  // Training draws windows from anywhere: read the whole file ahead now, as the whole-file read it replaces did,
  // rather than fault it in page by page at random.
  ::madvise(mapped, size_, MADV_WILLNEED);
  bytes_ = static_cast<const uint8_t*>(mapped);
  contents_ = descriptor_contents(fd_).value_or("");
  slot_ = publish(bytes_, size_, path);
}

MappedFile::~MappedFile() {
  if (slot_ >= 0) g_slots[slot_].end.store(0, std::memory_order_release);
  ::munmap(const_cast<uint8_t*>(bytes_), size_);
  ::close(fd_);
}

void MappedFile::require_whole() const {
  struct stat info {};
  if (::fstat(fd_, &info) == 0 && static_cast<size_t>(info.st_size) >= size_) return;
  throw DataFileChangedError("data file '" + path_ + "' was cut short while the run read it (" + std::to_string(size_) +
                             " bytes when the run started, " + std::to_string(info.st_size) +
                             " now): restore it and continue with --resume auto");
}

std::optional<std::string> MappedFile::change() const {
  const std::string now = descriptor_contents(fd_).value_or("unreadable");
  if (now == contents_) return std::nullopt;
  return contents_ + " when the run started, " + now + " now";
}

}  // namespace lrkit::train
