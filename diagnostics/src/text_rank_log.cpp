// Per-rank logs as text: CSV and JSON lines, in one file (a row per step and rank, or a column per rank) or one file
// per rank, gridded into RankLog's [step, rank] layout.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <string_view>

#include "json_line.hpp"
#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "rank_log_parts.hpp"

namespace lrkit::diagnostics {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The file's name for each field.
struct Names {
  std::string of[5];
  explicit Names(const ReadOptions& o) {
    for (size_t f = 0; f < 5; ++f) {
      const auto mapped = o.columns.find(kFields[f]);
      of[f] = mapped == o.columns.end() ? kFields[f] : mapped->second;
    }
  }
  const std::string& operator[](Field f) const { return of[f]; }
  // " (mapped from loss)" where the file's name is not the field's own, for a message naming a missing one.
  std::string mapped_from(Field f) const { return of[f] != kFields[f] ? std::string(" (mapped from ") + kFields[f] + ")" : ""; }
};

struct Row {
  double step = 0;
  int64_t rank = 0;
  double loss = 0, grad_norm = 0, cos_to_mean = std::nan("");
  bool has_cos = false;
  size_t file = 0;  // index into the sources
  size_t line = 0;
};

// The rows read from text logs, and what was left out of them.
struct TextRows {
  std::vector<Row> rows;
  std::vector<std::string> warnings;
  // A DispersionHook's JSON lines mark the rows of the first step of each session ("session": "fresh" or "resume"):
  // whether any row was marked, and the resumes' steps in the order the rows were read.
  bool records_sessions = false;
  std::vector<Resume> resumed;
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

// Rows of every (step, rank) pair into the [step, rank] layout. A step without a row for every rank is skipped with
// a warning; a pair given twice is an error, named at its second row. The rows are ordered by sorting their indices
// (a tree of steps and ranks, before, made two allocations a row).
RankLog assemble(const std::vector<std::string>& sources, const TextRows& text) {
  const std::vector<Row>& rows = text.rows;
  std::string source = sources.front();
  if (sources.size() > 1) source += " and " + std::to_string(sources.size() - 1) + " more file(s), one per rank";
  if (rows.empty()) throw RankLogError(source + ": no rows");
  const auto where = [&](const Row& r) { return sources[r.file] + " line " + std::to_string(r.line); };
  int64_t ranks = 0;
  for (const Row& r : rows) {
    if (r.rank < 0 || r.rank > 65535) throw RankLogError(where(r) + ": rank " + std::to_string(r.rank) + " is out of range");
    ranks = std::max(ranks, r.rank + 1);
  }
  std::vector<size_t> order(rows.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
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
  const bool has_cos = rows.front().has_cos;
  RankLog log;
  log.source = source;
  log.ranks = ranks;
  log.warnings = text.warnings;
  log.records_sessions = text.records_sessions;
  const size_t per_step = static_cast<size_t>(ranks);
  log.steps.reserve(rows.size() / per_step);
  log.loss.reserve(rows.size());
  log.grad_norm.reserve(rows.size());
  if (has_cos) log.cos_to_mean.reserve(rows.size());
  std::vector<std::string> skipped;
  size_t skipped_count = 0;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {  // [begin, end): one step's rows, by rank
    end = begin + 1;
    while (end < order.size() && rows[order[end]].step == rows[order[begin]].step) ++end;
    const double step = rows[order[begin]].step;
    if (end - begin != per_step) {
      int64_t missing = 0;
      while (begin + static_cast<size_t>(missing) < end && rows[order[begin + missing]].rank == missing) ++missing;
      if (++skipped_count <= 5)
        skipped.push_back("step " + std::to_string(static_cast<long long>(step)) + " (no row for rank " + std::to_string(missing) + ")");
      continue;
    }
    log.steps.push_back(step);
    for (size_t k = begin; k < end; ++k) {
      const Row& r = rows[order[k]];
      if (r.has_cos != has_cos) throw RankLogError(where(r) + ": cos_to_mean must be given on every row or none");
      log.loss.push_back(r.loss);
      log.grad_norm.push_back(r.grad_norm);
      if (has_cos) log.cos_to_mean.push_back(r.cos_to_mean);
    }
  }
  if (log.steps.empty()) throw RankLogError(source + ": no step has a row for every one of its " + std::to_string(ranks) + " ranks");
  if (skipped_count > 0) {
    std::string listed;
    for (size_t i = 0; i < skipped.size(); ++i) listed += (i ? ", " : "") + skipped[i];
    if (skipped_count > skipped.size()) listed += ", ...";
    log.warnings.push_back(source + ": skipped " + std::to_string(skipped_count) + " step(s) missing a rank's row: " + listed);
  }
  if (text.records_sessions) {  // the log's first row starts its first session: a resume there resumed no row it holds
    std::vector<Resume> sessions{{log.steps.front(), std::nullopt}};
    sessions.insert(sessions.end(), text.resumed.begin(), text.resumed.end());
    log.resumes = resumes_with_rows(sessions, log.steps);
  }
  return log;
}

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

// The rows of one CSV file; `fixed_rank` >= 0: a per-rank file (no rank column needed).
void read_csv(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
              TextRows& out) {
  std::string header_line;
  if (!std::getline(in, header_line))
    throw RankLogError(source + ": empty file (expected a header with " + names[kStep] + ", " +
                       (fixed_rank < 0 ? names[kRank] + ", " : "") + names[kLoss] + ", " + names[kGradNorm] + ")");
  if (!header_line.empty() && header_line.back() == '\r') header_line.pop_back();
  std::vector<std::string> fields;  // one line's, reused
  const auto split = [&](const std::string& line, const std::string& where) {
    try {
      split_csv_line(line, ',', fields);
    } catch (const std::invalid_argument& e) {
      throw RankLogError(where + ": " + e.what());
    }
  };
  split(header_line, source + " header");
  const size_t width = fields.size();
  constexpr size_t kAbsent = static_cast<size_t>(-1);
  size_t column[5] = {kAbsent, kAbsent, kAbsent, kAbsent, kAbsent};  // a name's last column, where it repeats
  for (size_t i = 0; i < width; ++i)
    for (size_t f = 0; f < 5; ++f)
      if (fields[i] == names[Field(f)]) column[f] = i;
  for (const Field required : {kStep, kRank, kLoss, kGradNorm}) {
    if (fixed_rank >= 0 && required == kRank) continue;
    if (column[required] == kAbsent)
      throw RankLogError(source + " header: no column '" + names[required] + "'" + names.mapped_from(required) + " (have: " +
                         text_for_message(header_line) + "; map other names with --columns " + kFields[required] + "=NAME)");
  }
  const bool has_cos = column[kCosToMean] != kAbsent;
  for_each_row_line(in, 2, out, [&](const std::string& line, size_t number) {
    const auto where = [&] { return source + " line " + std::to_string(number); };
    split(line, where());
    if (fields.size() != width)
      throw RankLogError(where() + ": " + std::to_string(fields.size()) + " fields, the header has " + std::to_string(width) +
                         (fields.size() < width ? " (truncated file?)" : " (an unquoted comma in a field?)"));
    const auto in_column = [&](Field f) { return [&, f] { return where() + " column " + names[f]; }; };
    Row r;
    r.step = parse_step(fields[column[kStep]], in_column(kStep));
    r.rank = fixed_rank >= 0 ? fixed_rank : parse_rank(fields[column[kRank]], in_column(kRank));
    r.loss = parse_value(kLoss, fields[column[kLoss]], in_column(kLoss));
    r.grad_norm = parse_value(kGradNorm, fields[column[kGradNorm]], in_column(kGradNorm));
    if (has_cos) {
      r.cos_to_mean = parse_value(kCosToMean, fields[column[kCosToMean]], in_column(kCosToMean));
      r.has_cos = true;
    }
    r.file = file;
    r.line = number;
    out.rows.push_back(r);
  });
}

void read_json_lines(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
                     TextRows& out) {
  JsonObjectLine object;  // reused: its members keep their storage from line to line
  for_each_row_line(in, 1, out, [&](const std::string& line, size_t number) {
    const auto where = [&] { return source + " line " + std::to_string(number); };
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] != '{')
      throw RankLogError(where() + ": not a JSON object (a line must be one {...}; it starts with '" +
                         text_for_message(line.substr(first, 1)) + "')");
    try {
      object.parse(line);
    } catch (const JsonLineError& e) {
      throw RankLogError(where() + ": not a JSON object (" + e.what() + "; truncated file?)");
    }
    // Names are looked up whole: "train/loss" is one key, not a path.
    const auto text = [&](Field f) -> const std::string& {
      const JsonMember* member = object.find(names[f]);
      if (!member) throw RankLogError(where() + ": no field '" + names[f] + "'" + names.mapped_from(f));
      return member->text;
    };
    const auto in_field = [&](Field f) { return [&, f] { return where() + " field " + names[f]; }; };
    // null: a writer's missing or non-finite value, read as NaN (the report's NaN/Inf section then names it).
    const auto value = [&](Field f) {
      const std::string& field = text(f);
      return field == "null" ? std::nan("") : parse_value(f, field, in_field(f));
    };
    Row r;
    r.step = parse_step(text(kStep), in_field(kStep));
    r.rank = fixed_rank >= 0 ? fixed_rank : parse_rank(text(kRank), in_field(kRank));
    r.loss = value(kLoss);
    r.grad_norm = value(kGradNorm);
    if (object.find(names[kCosToMean])) {
      r.cos_to_mean = value(kCosToMean);
      r.has_cos = true;
    }
    // The hook's mark (the loop's settings are not the hook's to know: no "changed"); a field "session" of the
    // user's own, with other values, is not one.
    if (const JsonMember* session = object.find("session")) {
      const std::string& kind = session->text;
      out.records_sessions = out.records_sessions || kind == "fresh" || kind == "resume";
      if (kind == "resume") out.resumed.push_back({r.step, std::nullopt});
    }
    r.file = file;
    r.line = number;
    out.rows.push_back(r);
  });
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

RankLog read_text_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  const Names names(options);
  TextRows rows;
  std::vector<std::string> sources;
  const bool one_file = paths.size() == 1;
  for (size_t file = 0; file < paths.size(); ++file)
    sources.push_back(read_text_rows(paths[file], names, one_file ? -1 : static_cast<int64_t>(file), file, rows));
  return assemble(sources, rows);
}

}  // namespace lrkit::diagnostics
