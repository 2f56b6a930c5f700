#include "lrkit/common/wandb_log_reader.hpp"

#include <algorithm>

#include "lrkit/common/crc32.hpp"
#include "lrkit/common/file_status.hpp"
#include "lrkit/common/little_endian.hpp"

namespace lrkit {

namespace {

constexpr size_t kFileHeaderBytes = 7;
constexpr unsigned char kIdent[4] = {':', 'W', '&', 'B'};
constexpr uint64_t kMagic = 0xBEE1, kVersion = 0;
enum ChunkType : unsigned char { kFull = 1, kFirst = 2, kMiddle = 3, kLast = 4 };

// The 7 bytes at `header` begin as W&B's do (:W&B and the magic), whatever their version.
bool has_wandb_header(const unsigned char* header) {
  return std::equal(kIdent, kIdent + 4, header) && little_endian(header + 4, 2) == kMagic;
}

}  // namespace

bool is_wandb_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::array<unsigned char, kFileHeaderBytes> header{};
  return in.read(reinterpret_cast<char*>(header.data()), header.size()) && has_wandb_header(header.data());
}

WandbLogReader::WandbLogReader(const std::string& path) : path_(path), in_(path, std::ios::binary) {
  const auto size = file_size_of(path);
  if (!in_ || !size) throw WandbLogError("cannot open '" + path + "': no such file or not readable");
  size_ = *size;
  if (!load_block() || block_bytes_ < kFileHeaderBytes || !has_wandb_header(block_.data()))
    throw WandbLogError("'" + path + "' is not a Weights & Biases run log (it does not begin with :W&B's header)");
  if (block_[6] != kVersion)
    throw WandbLogError("'" + path + "' is a Weights & Biases run log of version " + std::to_string(block_[6]) +
                          "; lrkit reads version " + std::to_string(kVersion));
  at_ = kFileHeaderBytes;
}

bool WandbLogReader::load_block() {
  block_start_ += block_bytes_;
  const uint64_t left = size_ - std::min(size_, block_start_);
  block_bytes_ = static_cast<size_t>(std::min<uint64_t>(left, kBlockBytes));
  at_ = 0;
  if (block_bytes_ == 0) return false;
  in_.read(reinterpret_cast<char*>(block_.data()), static_cast<std::streamsize>(block_bytes_));
  if (!in_) throw WandbLogError("'" + path_ + "': cannot read byte " + std::to_string(block_start_) + " on");
  return true;
}

bool WandbLogReader::next(std::string& record) {
  if (cut_) return false;
  record.clear();
  bool inside = false;  // a FIRST chunk read, its LAST not yet
  const auto damaged = [&](const std::string& what) {
    return WandbLogError("'" + path_ + "': the chunk at byte " + std::to_string(block_start_ + at_) +
                           " is damaged (" + what + ")");
  };
  const auto end_of_file = [&] {
    cut_ = inside;
    return false;
  };
  for (;;) {
    if (block_bytes_ - at_ < kChunkHeaderBytes) {
      // The end of the file, a header cut short (a writer pads a block only when a chunk follows), or the block's
      // trailer of zeros.
      if (block_bytes_ < kBlockBytes) {
        cut_ = inside || at_ != block_bytes_;
        return false;
      }
      if (std::any_of(block_.begin() + static_cast<long>(at_), block_.begin() + static_cast<long>(block_bytes_),
                      [](unsigned char c) { return c != 0; }))
        throw damaged("a block's last " + std::to_string(block_bytes_ - at_) + " bytes are not zeros");
      if (!load_block()) return end_of_file();
      continue;
    }
    const unsigned char* header = block_.data() + at_;
    const uint32_t checksum = little_endian_32(header);
    const auto length = static_cast<size_t>(little_endian(header + 4, 2));
    const unsigned char type = header[6];
    if (checksum == 0 && length == 0 && type == 0 && !inside) {
      // Zeros where a chunk should start: the rest of a block never written (as LevelDB's readers, skipped).
      if (!load_block()) return end_of_file();
      continue;
    }
    if (length > block_bytes_ - at_ - kChunkHeaderBytes) {
      if (block_bytes_ < kBlockBytes) {  // the file ends inside the chunk
        cut_ = true;
        return false;
      }
      throw damaged("its length, " + std::to_string(length) + " bytes, runs past its block");
    }
    const unsigned char* data = header + kChunkHeaderBytes;
    if (crc32_ieee(data, length, crc32_ieee(&type, 1)) != checksum)
      throw damaged("the checksum of its type and " + std::to_string(length) + " bytes of data does not match");
    if (type < kFull || type > kLast) throw damaged("chunk type " + std::to_string(type) + " is none of 1 to 4");
    if ((type == kFull || type == kFirst) == inside)
      throw damaged(inside ? "a record starts before the one it follows ends"
                           : "it continues a record that was not started");
    if (type == kFull || type == kFirst) record_offset_ = block_start_ + at_;
    record.append(reinterpret_cast<const char*>(data), length);
    at_ += kChunkHeaderBytes + length;
    if (type == kFull || type == kLast) return true;
    inside = true;
  }
}

}  // namespace lrkit
