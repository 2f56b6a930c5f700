// The scalars of a TensorBoard writer, as the per-rank reader (tfevents_rank_log.cpp) gathers them: a row per step,
// its tags by number. Built for the common case, an event per tag at increasing steps: a row holds a few scalars
// without allocating, and a new step's row is made at the end of the rows at once.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace lrkit::diagnostics {

// Scalar tags by number: a step's scalars name their tags by it.
class Tags {
 public:
  size_t id(std::string_view name) {
    // A log has a few tags, compared faster than hashed; a log of many (a tag per rank) looks them up.
    constexpr size_t kCompared = 16;
    for (size_t i = 0; i < names_.size() && i < kCompared; ++i)
      if (names_[i] == name) return i;
    key_.assign(name);
    if (const auto at = ids_.find(key_); at != ids_.end()) return at->second;
    ids_.emplace(key_, names_.size());
    names_.push_back(key_);
    return names_.size() - 1;
  }
  size_t size() const { return names_.size(); }
  const std::string& name(size_t id) const { return names_[id]; }

 private:
  std::unordered_map<std::string, size_t> ids_;
  std::vector<std::string> names_;
  std::string key_;  // reused
};

struct Scalar {
  size_t tag;
  double value;
};

// One step's scalars, and where the first of them was logged: a file (an index into the files read) and the event's
// byte in it.
class ScalarRow {
 public:
  ScalarRow(size_t file_, uint64_t offset_) : file(file_), offset(offset_) {}
  size_t file;
  uint64_t offset;

  void set(size_t tag, double value) {  // a tag logged again at the step: its later value
    for (size_t i = 0; i < size(); ++i)
      if ((*this)[i].tag == tag) return void((*this)[i].value = value);
    if (inline_count_ < inline_.size()) inline_[inline_count_++] = {tag, value};
    else more_.push_back({tag, value});
  }
  size_t size() const { return inline_count_ + more_.size(); }
  const Scalar& operator[](size_t i) const { return i < inline_count_ ? inline_[i] : more_[i - inline_count_]; }
  Scalar& operator[](size_t i) { return i < inline_count_ ? inline_[i] : more_[i - inline_count_]; }

 private:
  std::array<Scalar, 4> inline_{};
  size_t inline_count_ = 0;
  std::vector<Scalar> more_;  // past the fourth
};

// A writer's rows, by step. A map, where a vector in step order made a row that comes before the last (a tag first
// logged at steps the others passed, add_scalars' runs folded into a sparser one) an insertion in the middle.
class ScalarRows {
 public:
  using Map = std::map<int64_t, ScalarRow>;
  // The row of `step`, made where there is none with the place its first scalar was logged.
  ScalarRow& row(int64_t step, size_t file, uint64_t offset) {
    if (!rows_.empty() && std::prev(rows_.end())->first == step) return std::prev(rows_.end())->second;
    return rows_.try_emplace(rows_.end(), step, file, offset)->second;  // the end: where a new step goes
  }
  // Drops the rows from `step` on.
  void drop_from(int64_t step) { rows_.erase(rows_.lower_bound(step), rows_.end()); }
  // Takes `later`'s rows, each scalar replacing this one's value of its tag at its step.
  void take(ScalarRows&& later) {
    if (rows_.empty()) return rows_.swap(later.rows_);  // merge() rebalances the tree it takes each node from
    for (const auto& [step, r] : later.rows_) {
      ScalarRow& into = row(step, r.file, r.offset);
      for (size_t i = 0; i < r.size(); ++i) into.set(r[i].tag, r[i].value);
    }
  }
  bool empty() const { return rows_.empty(); }
  const Map& by_step() const { return rows_; }

 private:
  Map rows_;
};

}  // namespace lrkit::diagnostics
