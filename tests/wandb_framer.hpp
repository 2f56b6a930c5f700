// Weights & Biases run logs written for tests, independently of tests/golden/make_wandb.py: records in protobuf's
// wire form (wandb_internal.proto's field numbers) framed as W&B frames them, so that edge cases of the format can be
// placed where a test wants them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/common/crc32.hpp"
#include "wire_writer.hpp"

namespace lrkit::testing {

// A Record holding a HistoryRecord of (key, value_json) items.
inline std::string history(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string row;
  for (const auto& [key, json] : items) row += field(1, field(1, key) + field(16, json));
  return varint(1 << 3) + varint(1) + field(2, row);
}
// A Record holding a MetricRecord: define_metric(name or glob, step_metric=...).
inline std::string metric(const std::string& name, const std::string& glob, const std::string& step_metric) {
  return field(12, (name.empty() ? "" : field(1, name)) + (glob.empty() ? "" : field(2, glob)) +
                       (step_metric.empty() ? "" : field(4, step_metric)));
}
// A ConfigRecord's updates of (key, value_json).
inline std::string config_updates(const std::vector<std::pair<std::string, std::string>>& items) {
  std::string updates;
  for (const auto& [key, json] : items) updates += field(1, field(1, key) + field(16, json));
  return updates;
}
// A Record holding a ConfigRecord (wandb.config.update).
inline std::string config(const std::vector<std::pair<std::string, std::string>>& items) {
  return field(5, config_updates(items));
}
// A Record holding the RunRecord wandb.init writes first: its ID, name, group and config.
inline std::string run(const std::string& id, const std::string& name, const std::string& group,
                       const std::vector<std::pair<std::string, std::string>>& config_items = {}) {
  return field(17, field(1, id) + field(4, config_updates(config_items)) + field(6, group) + field(8, name));
}

// W&B's framing: the header, then chunks in 32 KiB blocks; a block's last bytes, too few for a header, zeros.
class Framer {
 public:
  Framer() : data_(std::string(":W&B") + '\xE1' + '\xBE' + '\0') {}
  Framer& record(const std::string& s) {
    size_t used = 0;
    bool first = true;
    do {
      size_t space = 32768 - data_.size() % 32768;
      if (space < 7) {
        data_.append(space, '\0');
        space = 32768;
      }
      const size_t take = std::min(s.size() - used, space - 7);
      const bool last = used + take == s.size();
      chunk(s.substr(used, take), first ? (last ? 1 : 2) : (last ? 4 : 3));
      used += take;
      first = false;
    } while (used < s.size());
    return *this;
  }
  // A record of output (which the reader passes over) whose chunk leaves exactly `left` bytes in the block.
  Framer& leave(size_t left) {
    const size_t target = 32768 - data_.size() % 32768 - left - 7;  // the record's size
    for (size_t size_bytes = 1; size_bytes <= 3; ++size_bytes)
      if (const size_t text = target - 1 - size_bytes; varint(text).size() == size_bytes)
        return record(field(4, std::string(text, 'o')));
    ADD_FAILURE() << "no record of " << target << " bytes";
    return *this;
  }
  // Zeros to the block's end, as a block never written holds.
  Framer& zeros_to_block_end() {
    data_.append(32768 - data_.size() % 32768, '\0');
    return *this;
  }
  const std::string& bytes() const { return data_; }
  void chunk(const std::string& data, unsigned char type) {
    const auto* p = reinterpret_cast<const unsigned char*>(data.data());
    const uint32_t crc = crc32_ieee(p, data.size(), crc32_ieee(&type, 1));
    for (int i = 0; i < 4; ++i) data_.push_back(static_cast<char>((crc >> (8 * i)) & 0xFFu));
    data_.push_back(static_cast<char>(data.size() & 0xFFu));
    data_.push_back(static_cast<char>(data.size() >> 8));
    data_.push_back(static_cast<char>(type));
    data_ += data;
  }

 private:
  std::string data_;
};

}  // namespace lrkit::testing
