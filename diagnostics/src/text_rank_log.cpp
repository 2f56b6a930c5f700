// Per-rank logs as text: CSV and JSON lines, in one file (a row per step and rank, or a column per rank) or one file
// per rank, gridded into RankLog's [step, rank] layout.
#include <algorithm>
#include <cmath>
#include <deque>
#include <fstream>
#include <numeric>
#include <optional>
#include <string_view>
#include <utility>

#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "rank_log_parts.hpp"
#include "text_rows.hpp"

namespace lrkit::diagnostics {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

// Calls parse(line, number) for each non-blank line from `number` on. A last line without its line end that does
// not parse is a row a killed writer cut off (writers end every row): left out with a warning, so the log of a
// killed run still reads. Anywhere else, a line that does not parse is an error.
template <class Parse>
void for_each_row_line(std::istream& in, size_t number, TextRows& out, const Parse& parse) {
  std::string line;
  for (; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    try {
      parse(line, number);
    } catch (const RankLogError& e) {
      if (!in.eof()) throw;
      out.warnings.push_back(std::string(e.what()) + "; the last line, without its line end: a row cut off by a kill, left out");
    }
  }
}

}  // namespace

// The rows are ordered by sorting their indices (a tree of steps and ranks, before, made two allocations a row).
RankLog assemble(const std::string& source, const std::vector<File>& files, const TextRows& text, const Names& names) {
  const std::vector<Row>& rows = text.rows;
  if (rows.empty()) throw RankLogError(source + ": no rows");
  const auto where = [&](const Row& r) {
    return files[r.file].name + " " + files[r.file].position + " " + std::to_string(r.position);
  };
  int64_t ranks = 0;
  for (const Row& r : rows) {
    if (r.rank < 0 || r.rank > 65535) throw RankLogError(where(r) + ": rank " + std::to_string(r.rank) + " is out of range");
    ranks = std::max(ranks, r.rank + 1);
  }
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto key = [&](size_t i) { return std::make_pair(rows[i].step, rows[i].rank); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  // A pair given twice: the row that repeats it first in the files' order (each pair's rows stay in that order).
  size_t repeated = rows.size();
  for (size_t k = 1; k < order.size(); ++k)
    if (key(order[k]) == key(order[k - 1])) repeated = std::min(repeated, order[k]);
  if (repeated < rows.size()) {
    const Row& r = rows[repeated];
    throw RankLogError(where(r) + ": step " + std::to_string(static_cast<long long>(r.step)) + " rank " +
                       std::to_string(r.rank) + " appears twice");
  }
  const Row& first_row = rows.front();
  const bool has_cos = first_row.has_cos, has_grad_norm = first_row.has_grad_norm;
  // A log gives a gradient norm with every loss or with none: a row without one among rows with one would be read as
  // a NaN, which the report calls a divergence.
  const auto check_grad_norm = [&](const Row& r) {
    if (r.has_grad_norm == has_grad_norm) return;
    const Row& lacking = has_grad_norm ? r : first_row;
    const Row& giving = has_grad_norm ? first_row : r;
    const std::string per_rank = WidePattern(names[kGradNorm]).name(static_cast<size_t>(lacking.rank));
    throw RankLogError(where(lacking) + ": no gradient norm for rank " + std::to_string(lacking.rank) + " ('" +
                       text_for_message(names[kGradNorm]) + "', or '" + text_for_message(per_rank) +
                       "' with a field per rank), where " + where(giving) + " gives rank " +
                       std::to_string(giving.rank) + "'s: a log gives one with every loss or with none");
  };
  RankLog log;
  log.source = source;
  log.ranks = ranks;
  log.warnings = text.warnings;
  log.records_sessions = text.records_sessions;
  const size_t per_step = static_cast<size_t>(ranks);
  log.steps.reserve(rows.size() / per_step);
  log.loss.reserve(rows.size());
  if (has_grad_norm) log.grad_norm.reserve(rows.size());
  if (has_cos) log.cos_to_mean.reserve(rows.size());
  LeftOutSteps skipped;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {  // [begin, end): one step's rows, by rank
    end = begin + 1;
    while (end < order.size() && rows[order[end]].step == rows[order[begin]].step) ++end;
    const double step = rows[order[begin]].step;
    if (end - begin != per_step) {
      skipped.add([&] {  // the first rank it lacks
        int64_t missing = 0;
        while (begin + static_cast<size_t>(missing) < end && rows[order[begin + missing]].rank == missing) ++missing;
        return "step " + std::to_string(static_cast<long long>(step)) + " (no row for rank " + std::to_string(missing) + ")";
      });
      continue;
    }
    log.steps.push_back(step);
    for (size_t k = begin; k < end; ++k) {
      const Row& r = rows[order[k]];
      if (r.has_cos != has_cos) throw RankLogError(where(r) + ": cos_to_mean must be given on every row or none");
      check_grad_norm(r);
      log.loss.push_back(r.loss);
      if (has_grad_norm) log.grad_norm.push_back(r.grad_norm);
      if (has_cos) log.cos_to_mean.push_back(r.cos_to_mean);
    }
  }
  if (log.steps.empty()) throw RankLogError(source + ": no step has a row for every one of its " + std::to_string(ranks) + " ranks");
  if (skipped.count > 0)
    log.warnings.push_back(source + ": skipped " + std::to_string(skipped.count) + " step(s) missing a rank's row: " +
                           skipped.listed());
  if (!has_grad_norm) {
    const std::string rank_0s = WidePattern(names[kGradNorm]).name(0);
    log.warnings.push_back(source + ": no gradient norms ('" + text_for_message(names[kGradNorm]) + "', or '" +
                           text_for_message(rank_0s) + "', ... with a field per rank): the loss alone is diagnosed; "
                           "map another name with --columns grad_norm=NAME");
  }
  if (text.records_sessions) {  // the log's first row starts its first session: a resume there resumed no row it holds
    std::vector<Resume> sessions{{log.steps.front(), std::nullopt}};
    sessions.insert(sessions.end(), text.resumed.begin(), text.resumed.end());
    log.resumes = resumes_with_rows(sessions, log.steps);
  }
  return log;
}

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

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

constexpr size_t kAbsent = static_cast<size_t>(-1);

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
std::string wide_hint(WideNames& wide, const char* layout) {
  return std::string(layout) + " per rank names them " + wide.of(kLoss, 0) + ", " + wide.of(kLoss, 1) + ", ... and " +
         wide.of(kGradNorm, 0) + ", " + wide.of(kGradNorm, 1) + ", ...";
}

// The members of a JSON row with a field per rank, sorted by rank and field in one pass over the object: looking each
// rank's gradient norm and cosine up by name made a row of R ranks cost R^2 name comparisons.
class WideRow {
 public:
  static constexpr Field kFields[3] = {kLoss, kGradNorm, kCosToMean};
  struct Members {
    const JsonMember* first[3] = {};   // by kFields' order; null: the row has no such field for the rank
    const JsonMember* repeat[3] = {};  // a second member of the same name
  };
  void read(const JsonObject& object, const WideNames& names) {
    ++row_;
    ranks_.clear();
    for (size_t i = 0; i < object.size(); ++i)
      for (size_t f = 0; f < 3; ++f) {
        const int64_t k = names.rank_of(kFields[f], object[i].name);
        if (k < 0) continue;
        Members& m = of_rank(static_cast<size_t>(k));
        if (m.first[f]) {
          if (!m.repeat[f]) m.repeat[f] = &object[i];
          continue;
        }
        m.first[f] = &object[i];
        if (f == 0) ranks_.push_back(static_cast<size_t>(k));
      }
  }
  const std::vector<size_t>& ranks() const { return ranks_; }  // those whose loss the row names, in its order
  const Members& of(size_t rank) const { return members_[rank]; }

 private:
  Members& of_rank(size_t rank) {  // cleared once per row, as the row first names the rank
    if (members_.size() <= rank) {
      members_.resize(rank + 1);
      row_of_.resize(rank + 1, 0);
    }
    if (row_of_[rank] != row_) {
      members_[rank] = Members();
      row_of_[rank] = row_;
    }
    return members_[rank];
  }
  std::vector<Members> members_;
  std::vector<size_t> row_of_;
  size_t row_ = 0;
  std::vector<size_t> ranks_;
};

// The columns a CSV row is read from for one rank.
struct RankColumns {
  int64_t rank = -1;  // -1: the rank column's value
  size_t loss = kAbsent, grad_norm = kAbsent, cos_to_mean = kAbsent;
};

// The rows of one CSV file: a row per step and rank (a rank column), a row per step with a column per rank and field
// (no rank column; NAME_0, NAME_1, ...), or, with `fixed_rank` >= 0, one rank's file (no rank column needed).
void read_csv(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
              TextRows& out) {
  WideNames wide_names(names);
  std::string header_line;
  if (!std::getline(in, header_line))
    throw RankLogError(source + ": empty file (expected a header with " + names[kStep] + ", " +
                       (fixed_rank < 0 ? names[kRank] + ", " : "") + names[kLoss] + ", " + names[kGradNorm] + ")");
  if (!header_line.empty() && header_line.back() == '\r') header_line.pop_back();
  std::vector<std::string> fields;  // one line's, reused
  const auto split = [&](const std::string& line, const auto& where) {  // where(): made for an error alone
    try {
      split_csv_line(line, ',', fields);
    } catch (const std::invalid_argument& e) {
      throw RankLogError(where() + ": " + e.what());
    }
  };
  split(header_line, [&] { return source + " header"; });
  const std::vector<std::string> header = fields;
  // A column read twice is ambiguous (Python's csv.DictReader reads the last, pandas the first): refused.
  const auto repeated = [&](const std::string& name, size_t first, size_t second) {
    return RankLogError(source + " header: column '" + text_for_message(name) + "' appears twice (columns " +
                        std::to_string(first + 1) + " and " + std::to_string(second + 1) +
                        "), and which one to read is not clear: rename one");
  };
  const auto column_named = [&](const std::string& name) {
    size_t found = kAbsent;
    for (size_t i = 0; i < header.size(); ++i) {
      if (header[i] != name) continue;
      if (found != kAbsent) throw repeated(name, found, i);
      found = i;
    }
    return found;
  };
  const auto missing = [&](const std::string& name, Field f, const std::string& hint) {
    return RankLogError(source + " header: no column '" + name + "'" + names.mapped_from(f) +
                        " (have: " + text_for_message(header_line) + "; " + hint + ")");
  };
  const auto map_hint = [&](Field f) { return std::string("map other names with --columns ") + kFields[f] + "=NAME"; };
  const size_t step_column = column_named(names[kStep]);
  if (step_column == kAbsent) throw missing(names[kStep], kStep, map_hint(kStep));
  const size_t rank_column = fixed_rank >= 0 ? kAbsent : column_named(names[kRank]);
  std::vector<size_t> loss_columns;  // by rank, where the header is a wide table's
  std::optional<std::pair<size_t, size_t>> loss_repeat;  // refused where the table is wide
  for (size_t i = 0; i < header.size(); ++i)
    if (const int64_t k = wide_names.rank_of(kLoss, header[i]); k >= 0) {
      const auto rank_k = static_cast<size_t>(k);
      if (loss_columns.size() <= rank_k) loss_columns.resize(rank_k + 1, kAbsent);
      if (loss_columns[rank_k] != kAbsent && !loss_repeat) loss_repeat.emplace(loss_columns[rank_k], i);
      loss_columns[rank_k] = i;
    }
  const bool wide = fixed_rank < 0 && rank_column == kAbsent && !loss_columns.empty();
  if (wide && loss_repeat) throw repeated(header[loss_repeat->first], loss_repeat->first, loss_repeat->second);
  std::vector<RankColumns> plan;
  if (wide) {
    for (size_t k = 0; k < loss_columns.size(); ++k) {
      // A rank without columns amid the others (loss_0 and loss_2): every step would lack its row.
      if (loss_columns[k] == kAbsent)
        throw missing(wide_names.of(kLoss, k), kLoss, wide_hint(wide_names, "a table with a column"));
      const RankColumns c{static_cast<int64_t>(k), loss_columns[k], column_named(wide_names.of(kGradNorm, k)),
                          column_named(wide_names.of(kCosToMean, k))};
      // Gradient norms are optional (the loss alone is then diagnosed), unless named by a mapping.
      if (c.grad_norm == kAbsent && names.mapped(kGradNorm))
        throw missing(wide_names.of(kGradNorm, k), kGradNorm, wide_hint(wide_names, "a table with a column"));
      if (!plan.empty() && (c.grad_norm == kAbsent) != (plan.front().grad_norm == kAbsent)) {
        const size_t lacking = c.grad_norm == kAbsent ? k : 0;
        throw missing(wide_names.of(kGradNorm, lacking), kGradNorm, "grad_norm is given for every rank or none");
      }
      if (!plan.empty() && (c.cos_to_mean == kAbsent) != (plan.front().cos_to_mean == kAbsent)) {
        const size_t lacking = c.cos_to_mean == kAbsent ? k : 0;
        throw missing(wide_names.of(kCosToMean, lacking), kCosToMean, "cos_to_mean is given for every rank or none");
      }
      plan.push_back(c);
    }
  } else {
    if (fixed_rank < 0 && rank_column == kAbsent)
      throw missing(names[kRank], kRank, map_hint(kRank) + "; " + wide_hint(wide_names, "a table with a column"));
    plan.push_back(
        {fixed_rank, column_named(names[kLoss]), column_named(names[kGradNorm]), column_named(names[kCosToMean])});
    if (plan[0].loss == kAbsent) throw missing(names[kLoss], kLoss, map_hint(kLoss));
    if (plan[0].grad_norm == kAbsent && names.mapped(kGradNorm))
      throw missing(names[kGradNorm], kGradNorm, map_hint(kGradNorm));
  }
  const size_t width = header.size();
  ValuelessSteps valueless;
  const size_t first_row = out.rows.size();
  bool cosine_seen = false;  // a cosine column with every cell empty is one the writer left empty: no cosines
  for_each_row_line(in, 2, out, [&](const std::string& line, size_t number) {
    const auto where = [&] { return source + " line " + std::to_string(number); };
    split(line, where);
    if (fields.size() != width)
      throw RankLogError(where() + ": " + std::to_string(fields.size()) + " fields, the header has " + std::to_string(width) +
                         (fields.size() < width ? " (truncated file?)" : " (an unquoted comma in a field?)"));
    const auto in_column = [&](size_t column) { return [&, column] { return where() + " column " + header[column]; }; };
    const double step = parse_step(fields[step_column], in_column(step_column));
    const auto empty = [&](size_t column) { return column == kAbsent || fields[column].empty(); };
    if (wide && std::all_of(plan.begin(), plan.end(), [&](const RankColumns& c) {
          return empty(c.loss) && empty(c.grad_norm) && empty(c.cos_to_mean);
        })) {
      valueless.add(step);
      return;
    }
    // An empty value is NaN: pandas writes a missing or NaN value so, and reads it back so, as JSON lines' null reads.
    const auto cell_value = [&](Field f, size_t column) {
      return fields[column].empty() ? std::nan("") : parse_value(f, fields[column], in_column(column));
    };
    for (const RankColumns& c : plan) {
      Row r;
      r.step = step;
      r.rank = c.rank >= 0 ? c.rank : parse_rank(fields[rank_column], in_column(rank_column));
      r.loss = cell_value(kLoss, c.loss);
      if (c.grad_norm != kAbsent) {
        r.grad_norm = cell_value(kGradNorm, c.grad_norm);
        r.has_grad_norm = true;
      }
      if (c.cos_to_mean != kAbsent) {
        r.cos_to_mean = cell_value(kCosToMean, c.cos_to_mean);
        r.has_cos = true;
        cosine_seen = cosine_seen || !fields[c.cos_to_mean].empty();
      }
      r.file = file;
      r.position = number;
      out.rows.push_back(r);
    }
  });
  if (!cosine_seen)
    for (size_t i = first_row; i < out.rows.size(); ++i) out.rows[i].has_cos = false;
  valueless.warn(source, out.warnings);
}

// The rows of one JSON-lines file: an object per line (ObjectRows).
void read_json_lines(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
                     TextRows& out) {
  ObjectRows rows(names, fixed_rank, file, out);
  JsonObject object;  // reused: its members keep their storage from line to line
  for_each_row_line(in, 1, out, [&](const std::string& line, size_t number) {
    const auto where = [&] { return source + " line " + std::to_string(number); };
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] != '{')
      throw RankLogError(where() + ": not a JSON object (a line must be one {...}; it starts with '" +
                         text_for_message(line.substr(first, 1)) + "')");
    try {
      object.parse(line);
    } catch (const JsonError& e) {
      throw RankLogError(where() + ": not a JSON object (" + e.what() + "; truncated file?)");
    }
    rows.read(object, number, where);
  });
  rows.finish(source);
}

// Appends one text log's rows; returns its source name.
std::string read_text_rows(const std::string& path, const Names& names, int64_t fixed_rank, size_t file, TextRows& rows) {
  if (const auto problem = input_file_problem(path)) throw RankLogError(*problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RankLogError("cannot open '" + path + "'");
  skip_byte_order_mark(in);
  if (ends_with(path, ".csv")) {
    read_csv(path + " (CSV)", in, names, fixed_rank, file, rows);
    return path + " (CSV)";
  }
  if (ends_with(path, ".jsonl") || ends_with(path, ".json")) {
    read_json_lines(path + " (JSON lines)", in, names, fixed_rank, file, rows);
    return path + " (JSON lines)";
  }
  throw RankLogError("'" + path + "' is neither an HDF5 run log nor a .csv / .jsonl per-rank log");
}

}  // namespace

struct ObjectRows::State {
  State(const Names& n, int64_t rank, size_t f, TextRows& o)
      : names(n), wide_names(n), fixed_rank(rank), file(f), out(o) {}
  const Names& names;
  WideNames wide_names;
  int64_t fixed_rank;
  size_t file;
  TextRows& out;
  // The file's layout, told by its first row: a rank field (or a file of one rank), or a field per rank.
  enum class Layout { unknown, per_rank_row, per_rank_field } layout = Layout::unknown;
  WideRow wide_row;  // reused
  ValuelessSteps valueless;
  void read(const JsonObject& object, size_t number, const std::function<std::string()>& where);
};

ObjectRows::ObjectRows(const Names& names, int64_t fixed_rank, size_t file, TextRows& out)
    : state_(std::make_unique<State>(names, fixed_rank, file, out)) {}

ObjectRows::~ObjectRows() = default;

const JsonMember* ObjectRows::loss_named(const JsonObject& object) const {
  if (const JsonMember* loss = object.find(state_->names[kLoss])) return loss;
  for (size_t i = 0; i < object.size(); ++i)
    if (state_->wide_names.rank_of(kLoss, object[i].name) >= 0) return &object[i];
  return nullptr;
}

void ObjectRows::finish(const std::string& source) { state_->valueless.warn(source, state_->out.warnings); }

void ObjectRows::read(const JsonObject& object, size_t position, const std::function<std::string()>& where) {
  state_->read(object, position, where);
}

void ObjectRows::State::read(const JsonObject& object, size_t number, const std::function<std::string()>& where) {
  // Names are looked up whole: "train/loss" is one key, not a path. A field read twice is ambiguous (Python's json
  // reads the last, Boost's reader, used before, the first): refused.
  const auto twice = [&](const std::string& name) {
    return RankLogError(where() + ": field '" + text_for_message(name) +
                        "' appears twice, and which one to read is not clear");
  };
  const auto find_once = [&](const std::string& name) {
    const JsonMember* repeat = nullptr;
    const JsonMember* member = object.find(name, &repeat);
    if (repeat) throw twice(name);
    return member;
  };
  // `per_rank`: a missing field's message says how a row with a field per rank names them.
  const auto member_named = [&](const std::string& name, Field f, bool per_rank = false) -> const JsonMember& {
    const JsonMember* member = find_once(name);
    if (!member)
      throw RankLogError(where() + ": no field '" + name + "'" + names.mapped_from(f) +
                         (per_rank ? " (" + wide_hint(wide_names, "a row with a field") + ")" : ""));
    return *member;
  };
  const auto in_field = [&](const std::string& name) { return [&] { return where() + " field " + name; }; };
  // null: a writer's missing or non-finite value, read as NaN (the report's NaN/Inf section then names it).
  const auto value_of = [&](const JsonMember& member, Field f) {
    return member.text == "null" ? std::nan("") : parse_value(f, member.text, in_field(member.name));
  };
  const auto value = [&](const std::string& name, Field f, bool per_rank = false) {
    return value_of(member_named(name, f, per_rank), f);
  };
  const double step = parse_step(member_named(names[kStep], kStep).text, in_field(names[kStep]));
  const JsonMember* rank = fixed_rank < 0 ? find_once(names[kRank]) : nullptr;
  if (layout == Layout::unknown) {
    bool per_rank_field = false;
    for (size_t i = 0; i < object.size() && fixed_rank < 0 && !rank && !per_rank_field; ++i)
      per_rank_field = wide_names.rank_of(kLoss, object[i].name) >= 0;
    layout = per_rank_field ? Layout::per_rank_field : Layout::per_rank_row;
  }
  const bool wide = layout == Layout::per_rank_field;
  if (fixed_rank < 0 && !wide && !rank) member_named(names[kRank], kRank, true);  // names what is missing
  if (wide && rank)  // a row of the other layout: its loss would be read as no rank's
    throw RankLogError(where() + ": a field '" + text_for_message(names[kRank]) + "' in a file whose first row has a "
                       "field per rank (" + wide_names.of(kLoss, 0) + ", ...); a file holds one layout");
  // Gradient norms are optional (the loss alone is then diagnosed, where no row gives one: assemble), unless named by
  // a mapping: a row without one is then refused by member_named, which names it.
  const bool grad_norm_required = names.mapped(kGradNorm);
  const auto add_row = [&](int64_t rank_value, double loss, const JsonMember* grad_norm, const JsonMember* cosine) {
    Row r;
    r.step = step;
    r.rank = rank_value;
    r.loss = loss;
    if (grad_norm) {
      r.grad_norm = value_of(*grad_norm, kGradNorm);
      r.has_grad_norm = true;
    }
    if (cosine) {
      r.cos_to_mean = value_of(*cosine, kCosToMean);
      r.has_cos = true;
    }
    r.file = file;
    r.position = number;
    out.rows.push_back(r);
  };
  if (wide) {
    // A row with a field per rank holds the ranks whose loss it names, in any order; a rank it lacks has no row at
    // this step (the step is then skipped with a warning, as a long table's would be).
    wide_row.read(object, wide_names);
    if (wide_row.ranks().empty()) valueless.add(step);
    for (const size_t k : wide_row.ranks()) {
      const WideRow::Members& m = wide_row.of(k);
      for (const JsonMember* repeat : m.repeat)
        if (repeat) throw twice(repeat->name);
      // One statement each: a row's first problem is the one named, in the order rank, loss, gradient norm, cosine.
      const double loss = value_of(*m.first[0], kLoss);
      if (!m.first[1] && grad_norm_required) member_named(wide_names.of(kGradNorm, k), kGradNorm, true);
      add_row(static_cast<int64_t>(k), loss, m.first[1], m.first[2]);
    }
  } else {
    const int64_t rank_value = fixed_rank >= 0 ? fixed_rank : parse_rank(rank->text, in_field(names[kRank]));
    const double loss = value(names[kLoss], kLoss);
    const JsonMember* grad_norm =
        grad_norm_required ? &member_named(names[kGradNorm], kGradNorm) : find_once(names[kGradNorm]);
    add_row(rank_value, loss, grad_norm, find_once(names[kCosToMean]));
  }
  // The hook's mark (the loop's settings are not the hook's to know: no "changed"); a field "session" of the
  // user's own, with other values, is not one.
  if (const JsonMember* session = find_once("session")) {
    const std::string& kind = session->text;
    out.records_sessions = out.records_sessions || kind == "fresh" || kind == "resume";
    if (kind == "resume") out.resumed.push_back({step, std::nullopt});
  }
}

RankLog read_text_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  const Names names(options);
  TextRows rows;
  std::vector<File> files;
  const bool one_file = paths.size() == 1;
  for (size_t file = 0; file < paths.size(); ++file)
    files.push_back({read_text_rows(paths[file], names, one_file ? -1 : static_cast<int64_t>(file), file, rows)});
  std::string source = files.front().name;
  if (files.size() > 1) source += " and " + std::to_string(files.size() - 1) + " more file(s), one per rank";
  return assemble(source, files, rows, names);
}

}  // namespace lrkit::diagnostics
