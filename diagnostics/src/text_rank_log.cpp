// Per-rank logs as text: CSV and JSON lines, in one file (a row per step and rank, or a column per rank) or one file
// per rank, gridded into RankLog's [step, rank] layout.
#include <algorithm>
#include <fstream>
#include <optional>
#include <utility>

#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "rank_log_parts.hpp"
#include "text_fields.hpp"
#include "text_rows.hpp"

namespace lrkit::diagnostics {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

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

constexpr size_t kAbsent = static_cast<size_t>(-1);

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
    // An optional field's empty cell is marked: where every rank's is empty at a step, the step logs none (assemble).
    const auto cell_value = [&](Field f, size_t column) {
      return fields[column].empty() ? std::nan("") : parse_value(f, fields[column], in_column(column));
    };
    const auto given = [&](size_t column) { return fields[column].empty() ? Given::kBlank : Given::kValue; };
    for (const RankColumns& c : plan) {
      Row r;
      r.step = step;
      r.rank = c.rank >= 0 ? c.rank : parse_rank(fields[rank_column], in_column(rank_column));
      r.loss = cell_value(kLoss, c.loss);
      if (c.grad_norm != kAbsent) {
        r.grad_norm = cell_value(kGradNorm, c.grad_norm);
        r.grad_norm_given = given(c.grad_norm);
      }
      if (c.cos_to_mean != kAbsent) {
        r.cos_to_mean = cell_value(kCosToMean, c.cos_to_mean);
        r.cos_given = given(c.cos_to_mean);
      }
      r.file = file;
      r.position = number;
      out.rows.push_back(r);
    }
  });
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
