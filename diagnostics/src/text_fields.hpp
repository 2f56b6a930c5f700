// What the readers of per-rank text (CSV, JSON lines, a W&B run's rows) share to read one field: the names of a
// field per rank (loss_0, rank{rank}/loss), the numbers a cell or member may hold, and the steps a reader leaves out.
#pragma once

#include <cctype>
#include <cmath>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "rank_log_parts.hpp"
#include "text_rows.hpp"

namespace lrkit::diagnostics {

// A field's names in a wide table (a row per step, a column per rank and field, as pandas writes a frame and
// lrkit.read_log's frame("ranks") is one): NAME_k, or NAME with k in place of "{rank}" where a mapping holds it
// (--columns 'loss=rank{rank}/loss', as a tracker's export names a per-rank key).
class WidePattern {
 public:
  explicit WidePattern(const std::string& name) {
    const auto at = name.find("{rank}");
    prefix_ = at == std::string::npos ? name + "_" : name.substr(0, at);
    suffix_ = at == std::string::npos ? "" : name.substr(at + 6);
  }
  std::string name(size_t rank) const { return prefix_ + std::to_string(rank) + suffix_; }
  // The rank whose name `name` is (its number as to_string writes it, up to 65535), or -1.
  int64_t rank_of(std::string_view name) const {
    if (name.size() <= prefix_.size() + suffix_.size() || name.compare(0, prefix_.size(), prefix_) != 0 ||
        name.compare(name.size() - suffix_.size(), suffix_.size(), suffix_) != 0)
      return -1;
    const std::string_view digits = name.substr(prefix_.size(), name.size() - prefix_.size() - suffix_.size());
    if (digits.size() > 5 || (digits.size() > 1 && digits[0] == '0')) return -1;
    int64_t rank = 0;
    for (const char c : digits) {
      if (c < '0' || c > '9') return -1;
      rank = rank * 10 + (c - '0');
    }
    return rank <= 65535 ? rank : -1;
  }

 private:
  std::string prefix_, suffix_;
};

// Steps left out of a log, counted, the first five named: what a warning lists.
struct LeftOutSteps {
  size_t count = 0;
  std::vector<std::string> first;
  template <class Name>
  void add(const Name& name) {  // name(): made for the first five alone
    if (++count <= 5) first.push_back(name());
  }
  std::string listed() const {
    std::string text;
    for (size_t i = 0; i < first.size(); ++i) text += (i ? ", " : "") + first[i];
    return count > first.size() ? text + ", ..." : text;
  }
};

// The steps of a table with a column (or field) per rank whose row holds no rank's value: its cells are all empty, or
// its JSON object names no rank. Such a row is a step logged for other columns (a tracker's export), or one where
// every rank's value was NaN (pandas writes NaN as an empty cell): left out, and said in a warning.
struct ValuelessSteps {
  LeftOutSteps steps;
  void add(double step) {
    steps.add([&] { return "step " + std::to_string(static_cast<long long>(step)); });
  }
  void warn(const std::string& source, std::vector<std::string>& warnings) const {
    if (steps.count > 0)
      warnings.push_back(source + ": left out " + std::to_string(steps.count) + " step(s) whose row holds no rank's "
                         "value (logged for other columns, or NaN on every rank): " + steps.listed());
  }
};

inline bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// The number `text` holds, blanks around it allowed; `where()` names it in an error. NaN and Inf are accepted: a
// diverged rank is what the report looks for. from_chars (through chars_to_double, which also takes a leading '+')
// reads it as the C locale writes it, whatever the process's locale, and throws nothing on the way.
template <class Where>
double parse_number(std::string_view text, const Where& where) {
  size_t first = 0, last = text.size();
  while (first < last && is_space(text[first])) ++first;
  while (last > first && is_space(text[last - 1])) --last;
  double value = 0;
  const auto read = chars_to_double(text.data() + first, text.data() + last, value);
  if (first < last && read.ec == std::errc::result_out_of_range)
    throw RankLogError(where() + ": '" + text_for_message(text) + "' is out of the range of a double");
  if (first == last || read.ec != std::errc() || read.ptr != text.data() + last)
    throw RankLogError(where() + ": '" + text_for_message(text) + "' is not a number");
  return value;
}

// A finite whole number in [low, high]; otherwise an error saying it is not `what`.
template <class Where>
double parse_whole(std::string_view text, const Where& where, double low, double high, const char* what) {
  const double value = parse_number(text, where);
  if (!(value >= low && value <= high) || value != std::floor(value))
    throw RankLogError(where() + ": '" + text_for_message(text) + "' is not " + what);
  return value;
}

template <class Where>
int64_t parse_rank(std::string_view text, const Where& where) {
  return static_cast<int64_t>(parse_whole(text, where, 0, 65535, "a rank (a whole number in [0, 65535])"));
}

// Steps order the rows and key the grid, so only a finite whole number is a step (NaN would break the ordering).
template <class Where>
double parse_step(std::string_view text, const Where& where) {
  return parse_whole(text, where, -9007199254740992.0, 9007199254740992.0, "a step (a whole number)");
}

// A loss, gradient norm or cosine, checked against what the field can be (out_of_range).
template <class Where>
double parse_value(Field f, std::string_view text, const Where& where) {
  const double value = parse_number(text, where);
  if (const std::string problem = out_of_range(f, value); !problem.empty())
    throw RankLogError(where() + ": '" + text_for_message(text) + "' " + problem);
  return value;
}

// The fields' wide patterns, and their names made once per rank as the ranks come. A name given out stays valid as
// later ones are made (a deque's elements do not move), so a message may make more while it holds one.
class WideNames {
 public:
  explicit WideNames(const Names& names)
      : patterns_{WidePattern(names[kStep]), WidePattern(names[kRank]), WidePattern(names[kLoss]),
                  WidePattern(names[kGradNorm]), WidePattern(names[kCosToMean])} {}
  const std::string& of(Field f, size_t rank) {
    while (made_[f].size() <= rank) made_[f].push_back(patterns_[f].name(made_[f].size()));
    return made_[f][rank];
  }
  int64_t rank_of(Field f, std::string_view name) const { return patterns_[f].rank_of(name); }

 private:
  WidePattern patterns_[5];
  std::deque<std::string> made_[5];
};

// What a message about a row with a value per rank adds: "a table with a column per rank names them loss_0, ...".
inline std::string wide_hint(WideNames& wide, const char* layout) {
  return std::string(layout) + " per rank names them " + wide.of(kLoss, 0) + ", " + wide.of(kLoss, 1) + ", ... and " +
         wide.of(kGradNorm, 0) + ", " + wide.of(kGradNorm, 1) + ", ...";
}

}  // namespace lrkit::diagnostics
