#include "lrkit/diagnostics/rank_log.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "lrkit/common/csv_line.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/h5/file.hpp"

namespace lrkit::diagnostics {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A gradient norm is >= 0 and a cosine within [-1, 1], up to rounding. A finite value outside says the column holds
// another quantity (one mapped by mistake), whose report would be garbage: the problem in words, or "". NaN and Inf,
// a diverged rank's, are what the report looks for and are read as they are.
std::string out_of_range(const std::string& field, double value) {
  constexpr double kCosineRounding = 1e-3;  // a cosine computed in float32 or bfloat16 strays past 1
  if (!std::isfinite(value)) return "";
  if (field == "grad_norm" && value < 0) return "is not a gradient norm (a norm is >= 0)";
  if (field == "cos_to_mean" && std::fabs(value) > 1 + kCosineRounding) return "is not a cosine (in [-1, 1])";
  return "";
}

// The resumes among a log's sessions, given in the order they ran (the first started the rows the log begins with),
// whose rows the log holds: each session's rows last until a later one starts at or before them (a resume from an
// earlier checkpoint rewrote them), and a resume killed before its first row started none.
std::vector<Resume> resumes_with_rows(const std::vector<Resume>& sessions, const std::vector<double>& steps) {
  std::vector<Resume> in_effect;
  for (const Resume& session : sessions) {
    while (!in_effect.empty() && in_effect.back().step >= session.step) in_effect.pop_back();
    in_effect.push_back(session);
  }
  std::vector<Resume> resumes;
  for (size_t k = 1; k < in_effect.size(); ++k)
    if (!steps.empty() && in_effect[k].step <= steps.back()) resumes.push_back(in_effect[k]);
  return resumes;
}

// A run log's sessions (/sessions/0, 1, ...). A session whose step does not read is left out with a warning (a
// damaged attribute should not cost the report).
void read_resumes(const std::string& path, RankLog& log) {
  std::vector<Resume> started;
  const auto sessions = h5::read_numbered_attributes(path, "/sessions");
  log.records_sessions = !sessions.empty();
  for (size_t i = 0; i < sessions.size(); ++i) {
    const auto& attributes = sessions[i];
    const auto step = attributes.count("step") ? parse_integer(attributes.at("step")) : std::nullopt;
    if (!step) {
      log.warnings.push_back("'" + path + "': /sessions/" + std::to_string(i) +
                             " has no whole step (attribute 'step'); its session is left out");
      continue;
    }
    const auto changed = attributes.find("changed");
    started.push_back({static_cast<double>(*step), changed == attributes.end() ? std::nullopt
                                                                               : std::optional<std::string>(changed->second)});
  }
  log.resumes = resumes_with_rows(started, log.steps);
}

// A log its writer still holds, or left marked when killed, may end inside a
// flush: some series already hold rows the others do not yet (SeriesLog writes
// them one after another). Those rows are set aside with a warning; in a log
// closed properly, unequal lengths are an error.
RankLog read_run_log(const std::string& path) {
  RankLog log;
  log.source = path + " (lrkit run log)";
  try {
    for (const char* required : {"/train/step", "/ranks/loss", "/ranks/grad_norm"})
      if (!h5::has_dataset(path, required))
        throw RankLogError("'" + path + "' has no dataset " + required + " (is it an lrkit run log?)");
    log.steps = h5::read_series(path, "/train/step");
    auto loss = h5::read_matrix(path, "/ranks/loss");
    auto norm = h5::read_matrix(path, "/ranks/grad_norm");
    h5::Matrix cos_to_mean;
    const bool has_cos_to_mean = h5::has_dataset(path, "/ranks/cos_to_mean");
    if (has_cos_to_mean) cos_to_mean = h5::read_matrix(path, "/ranks/cos_to_mean");
    log.global_grad_norm = h5::read_series(path, "/train/grad_norm");
    std::vector<double> cos_pairwise;
    const bool has_cos_pairwise = h5::has_dataset(path, "/diagnostics/cos_pairwise");
    if (has_cos_pairwise) cos_pairwise = h5::read_series(path, "/diagnostics/cos_pairwise");
    const bool has_skipped = h5::has_dataset(path, "/train/skipped");
    if (has_skipped) log.skipped = h5::read_series(path, "/train/skipped");

    std::vector<int64_t> lengths = {static_cast<int64_t>(log.steps.size()), loss.rows, norm.rows,
                                    static_cast<int64_t>(log.global_grad_norm.size())};
    if (has_cos_to_mean) lengths.push_back(cos_to_mean.rows);
    if (has_cos_pairwise) lengths.push_back(static_cast<int64_t>(cos_pairwise.size()));
    if (has_skipped) lengths.push_back(static_cast<int64_t>(log.skipped.size()));
    const int64_t whole = *std::min_element(lengths.begin(), lengths.end());
    const int64_t longest = *std::max_element(lengths.begin(), lengths.end());
    if (longest > whole && h5::has_writer_mark(path)) {
      const auto cut_matrix = [whole](h5::Matrix& m) {
        m.rows = std::min(m.rows, whole);
        m.values.resize(static_cast<size_t>(m.rows * m.columns));
      };
      const auto cut_series = [whole](std::vector<double>& v) { v.resize(std::min(v.size(), static_cast<size_t>(whole))); };
      for (auto* m : {&loss, &norm, &cos_to_mean}) cut_matrix(*m);
      for (auto* v : {&log.steps, &log.global_grad_norm, &cos_pairwise, &log.skipped}) cut_series(*v);
      log.warnings.push_back("'" + path + "' is marked open for writing (a run writes it, or was killed): read the " +
                             std::to_string(whole) + " steps every series has; up to " + std::to_string(longest - whole) +
                             " more rows in some series are a flush under way or cut short");
    }

    log.ranks = loss.columns;
    auto check_rows = [&](const std::string& name, const h5::Matrix& m) {
      if (m.rows != static_cast<int64_t>(log.steps.size()) || m.columns != log.ranks)
        throw RankLogError("'" + path + "': " + name + " is [" + std::to_string(m.rows) + ", " + std::to_string(m.columns) +
                           "] but /train/step has " + std::to_string(log.steps.size()) + " rows and /ranks/loss " +
                           std::to_string(log.ranks) + " ranks");
    };
    check_rows("/ranks/loss", loss);
    check_rows("/ranks/grad_norm", norm);
    log.loss = std::move(loss.values);
    log.grad_norm = std::move(norm.values);
    if (has_cos_to_mean) {
      check_rows("/ranks/cos_to_mean", cos_to_mean);
      log.cos_to_mean = std::move(cos_to_mean.values);
    }
    for (size_t t = 1; t < log.steps.size(); ++t)
      if (!(log.steps[t] > log.steps[t - 1]))
        throw RankLogError("'" + path + "': /train/step does not increase at row " + std::to_string(t) + " (" +
                           format_number(log.steps[t]) + " after " + format_number(log.steps[t - 1]) +
                           "); `lrkit log check` says what else is wrong with the file");
    const auto check_range = [&](const std::string& name, const std::string& field, const std::vector<double>& values) {
      for (size_t i = 0; i < values.size(); ++i)
        if (const std::string problem = out_of_range(field, values[i]); !problem.empty())
          throw RankLogError("'" + path + "': " + name + " at step " + format_number(log.steps[i / log.ranks]) + ", rank " +
                             std::to_string(i % log.ranks) + " is " + format_number(values[i]) + ", which " + problem);
    };
    check_range("/ranks/grad_norm", "grad_norm", log.grad_norm);
    check_range("/ranks/cos_to_mean", "cos_to_mean", log.cos_to_mean);
    auto check_length = [&](const std::string& name, size_t rows) {
      if (rows != log.steps.size())
        throw RankLogError("'" + path + "': " + name + " has " + std::to_string(rows) + " rows but /train/step has " +
                           std::to_string(log.steps.size()));
    };
    check_length("/train/grad_norm", log.global_grad_norm.size());
    if (has_skipped) check_length("/train/skipped", log.skipped.size());
    if (has_cos_pairwise) {
      check_length("/diagnostics/cos_pairwise", cos_pairwise.size());
      bool measured = false;
      for (double c : cos_pairwise) measured = measured || !std::isnan(c);
      if (measured) log.cos_pairwise = std::move(cos_pairwise);
    }
    read_resumes(path, log);
  } catch (const h5::Error& e) {
    throw RankLogError(e.what());
  }
  return log;
}

const char* const kFields[] = {"step", "rank", "loss", "grad_norm", "cos_to_mean"};

// The file's name for each field.
struct Names {
  std::map<std::string, std::string> of;
  explicit Names(const ReadOptions& o) {
    for (const char* field : kFields) of[field] = field;
    for (const auto& [field, name] : o.columns) of[field] = name;
  }
  const std::string& operator[](const std::string& field) const { return of.at(field); }
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

// Rows of every (step, rank) pair into the [step, rank] layout. A step without
// a row for every rank is skipped with a warning; a pair given twice is an error.
RankLog assemble(const std::vector<std::string>& sources, const TextRows& text) {
  const std::vector<Row>& rows = text.rows;
  std::string source = sources.front();
  if (sources.size() > 1) source += " and " + std::to_string(sources.size() - 1) + " more file(s), one per rank";
  if (rows.empty()) throw RankLogError(source + ": no rows");
  const auto where = [&](const Row& r) { return sources[r.file] + " line " + std::to_string(r.line); };
  std::map<double, std::map<int64_t, size_t>> grid;
  int64_t ranks = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.rank < 0 || r.rank > 65535) throw RankLogError(where(r) + ": rank " + std::to_string(r.rank) + " is out of range");
    if (!grid[r.step].emplace(r.rank, i).second)
      throw RankLogError(where(r) + ": step " + std::to_string(static_cast<long long>(r.step)) + " rank " +
                         std::to_string(r.rank) + " appears twice");
    ranks = std::max(ranks, r.rank + 1);
  }
  const bool has_cos = rows.front().has_cos;
  RankLog log;
  log.source = source;
  log.ranks = ranks;
  log.warnings = text.warnings;
  log.records_sessions = text.records_sessions;
  std::vector<std::string> skipped;
  for (const auto& [step, by_rank] : grid) {
    if (static_cast<int64_t>(by_rank.size()) != ranks) {
      int64_t missing = 0;
      while (by_rank.count(missing)) ++missing;
      skipped.push_back("step " + std::to_string(static_cast<long long>(step)) + " (no row for rank " + std::to_string(missing) + ")");
      continue;
    }
    log.steps.push_back(step);
    for (const auto& [rank, index] : by_rank) {
      const auto& r = rows[index];
      if (r.has_cos != has_cos) throw RankLogError(where(r) + ": cos_to_mean must be given on every row or none");
      log.loss.push_back(r.loss);
      log.grad_norm.push_back(r.grad_norm);
      if (has_cos) log.cos_to_mean.push_back(r.cos_to_mean);
    }
  }
  if (log.steps.empty()) throw RankLogError(source + ": no step has a row for every one of its " + std::to_string(ranks) + " ranks");
  if (!skipped.empty()) {
    std::string listed;
    for (size_t i = 0; i < skipped.size() && i < 5; ++i) listed += (i ? ", " : "") + skipped[i];
    if (skipped.size() > 5) listed += ", ...";
    log.warnings.push_back(source + ": skipped " + std::to_string(skipped.size()) + " step(s) missing a rank's row: " + listed);
  }
  if (text.records_sessions) {  // the log's first row starts its first session: a resume there resumed no row it holds
    std::vector<Resume> sessions{{log.steps.front(), std::nullopt}};
    sessions.insert(sessions.end(), text.resumed.begin(), text.resumed.end());
    log.resumes = resumes_with_rows(sessions, log.steps);
  }
  return log;
}

// NaN and Inf are accepted: a diverged rank is what the report looks for.
double parse_number(const std::string& text, const std::string& where) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::out_of_range&) {
    throw RankLogError(where + ": '" + text + "' is out of the range of a double");
  } catch (const std::exception&) {
    used = 0;
  }
  while (used < text.size() && std::isspace(static_cast<unsigned char>(text[used]))) ++used;
  if (text.empty() || used != text.size()) throw RankLogError(where + ": '" + text_for_message(text) + "' is not a number");
  return value;
}

// A finite whole number in [low, high]; otherwise an error saying it is not `what`.
double parse_whole(const std::string& text, const std::string& where, double low, double high, const std::string& what) {
  const double value = parse_number(text, where);
  if (!(value >= low && value <= high) || value != std::floor(value))
    throw RankLogError(where + ": '" + text + "' is not " + what);
  return value;
}

int64_t parse_rank(const std::string& text, const std::string& where) {
  return static_cast<int64_t>(parse_whole(text, where, 0, 65535, "a rank (a whole number in [0, 65535])"));
}

// Steps order the rows and key the grid, so only a finite whole number is a step (NaN would break the ordering).
double parse_step(const std::string& text, const std::string& where) {
  return parse_whole(text, where, -9007199254740992.0, 9007199254740992.0, "a step (a whole number)");
}

// The rows of one CSV file; `fixed_rank` >= 0: a per-rank file (no rank column needed).
void read_csv(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
              TextRows& out) {
  std::string header_line;
  if (!std::getline(in, header_line))
    throw RankLogError(source + ": empty file (expected a header with " + names["step"] + ", " +
                       (fixed_rank < 0 ? names["rank"] + ", " : "") + names["loss"] + ", " + names["grad_norm"] + ")");
  if (!header_line.empty() && header_line.back() == '\r') header_line.pop_back();
  const auto fields_of = [&](const std::string& line, const std::string& where) {
    try {
      return split_csv_line(line, ',');
    } catch (const std::invalid_argument& e) {
      throw RankLogError(where + ": " + e.what());
    }
  };
  const std::vector<std::string> header = fields_of(header_line, source + " header");
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < header.size(); ++i) column[header[i]] = i;
  for (const char* required : {"step", "rank", "loss", "grad_norm"}) {
    if (fixed_rank >= 0 && std::string(required) == "rank") continue;
    if (!column.count(names[required]))
      throw RankLogError(source + " header: no column '" + names[required] + "'" +
                         (names[required] != required ? std::string(" (mapped from ") + required + ")" : "") + " (have: " + text_for_message(header_line) +
                         "; map other names with --columns " + required + "=NAME)");
  }
  const bool has_cos = column.count(names["cos_to_mean"]) > 0;
  for_each_row_line(in, 2, out, [&](const std::string& line, size_t number) {
    const std::string where = source + " line " + std::to_string(number);
    const std::vector<std::string> fields = fields_of(line, where);
    if (fields.size() != header.size())
      throw RankLogError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                         std::to_string(header.size()) +
                         (fields.size() < header.size() ? " (truncated file?)" : " (an unquoted comma in a field?)"));
    const auto text = [&](const char* f) -> const std::string& { return fields[column[names[f]]]; };
    const auto value = [&](const char* f) {
      const double read = parse_number(text(f), where + " column " + names[f]);
      if (const std::string problem = out_of_range(f, read); !problem.empty())
        throw RankLogError(where + " column " + names[f] + ": '" + text_for_message(text(f)) + "' " + problem);
      return read;
    };
    Row r;
    r.step = parse_step(text("step"), where + " column " + names["step"]);
    r.rank = fixed_rank >= 0 ? fixed_rank : parse_rank(text("rank"), where + " column " + names["rank"]);
    r.loss = value("loss");
    r.grad_norm = value("grad_norm");
    if (has_cos) {
      r.cos_to_mean = value("cos_to_mean");
      r.has_cos = true;
    }
    r.file = file;
    r.line = number;
    out.rows.push_back(r);
  });
}

// Python's json module writes the non-finite numbers a diverging worker has as the bare words NaN, Infinity and
// -Infinity, which strict JSON (and Boost's parser) refuses; quoted, they parse, and parse_number reads them.
std::string quote_non_finite_words(const std::string& line) {
  std::string out;
  out.reserve(line.size() + 8);
  bool in_string = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < line.size()) out += line[++i];
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    bool quoted = false;
    // Each word is tried only where it can start: comparing all three at every character was a fifth of the time
    // `lrkit diagnose` took on a large JSON-lines log.
    for (const char* word : {"NaN", "Infinity", "-Infinity"}) {
      if (c != word[0]) continue;
      const size_t n = std::char_traits<char>::length(word);
      if (line.compare(i, n, word) != 0) continue;  // also when fewer than n characters are left
      if (i + n == line.size() || std::string(",}] \t\r").find(line[i + n]) != std::string::npos) {
        out += '"' + std::string(word) + '"';
        i += n - 1;
        quoted = true;
        break;
      }
    }
    if (!quoted) out += c;
  }
  return out;
}

void read_json_lines(const std::string& source, std::istream& in, const Names& names, int64_t fixed_rank, size_t file,
                     TextRows& out) {
  namespace pt = boost::property_tree;
  for_each_row_line(in, 1, out, [&](const std::string& line, size_t number) {
    const std::string where = source + " line " + std::to_string(number);
    // Boost reads an array into a tree too, whose fields would then be reported missing one by one.
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] != '{')
      throw RankLogError(where + ": not a JSON object (a line must be one {...}; it starts with '" +
                         text_for_message(line.substr(first, 1)) + "')");
    pt::ptree object;
    try {
      std::istringstream text(quote_non_finite_words(line));
      pt::read_json(text, object);
    } catch (const pt::json_parser_error& e) {
      throw RankLogError(where + ": not a JSON object (" + e.message() + "; truncated file?)");
    }
    // Names are looked up whole: "train/loss" is one key, not a path.
    const auto find = [&](const char* f) { return object.find(names[f]); };
    const auto text = [&](const char* f) {
      const auto child = find(f);
      if (child == object.not_found())
        throw RankLogError(where + ": no field '" + names[f] + "'" +
                           (names[f] != f ? std::string(" (mapped from ") + f + ")" : std::string()));
      return child->second.data();
    };
    // null: a writer's missing or non-finite value, read as NaN (the report's NaN/Inf section then names it).
    const auto value = [&](const char* f) {
      const std::string& field = text(f);
      const double read = field == "null" ? std::nan("") : parse_number(field, where + " field " + names[f]);
      if (const std::string problem = out_of_range(f, read); !problem.empty())
        throw RankLogError(where + " field " + names[f] + ": '" + text_for_message(field) + "' " + problem);
      return read;
    };
    Row r;
    r.step = parse_step(text("step"), where + " field " + names["step"]);
    r.rank = fixed_rank >= 0 ? fixed_rank : parse_rank(text("rank"), where + " field " + names["rank"]);
    r.loss = value("loss");
    r.grad_norm = value("grad_norm");
    if (find("cos_to_mean") != object.not_found()) {
      r.cos_to_mean = value("cos_to_mean");
      r.has_cos = true;
    }
    // The hook's mark (the loop's settings are not the hook's to know: no "changed"); a field "session" of the
    // user's own, with other values, is not one.
    if (const auto session = object.find("session"); session != object.not_found()) {
      const std::string& kind = session->second.data();
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

std::map<std::string, std::string> parse_column_mapping(const std::string& text) {
  std::map<std::string, std::string> mapping;
  std::istringstream entries(text);
  std::string entry;
  while (std::getline(entries, entry, ',')) {
    const auto eq = entry.find('=');
    const std::string field = entry.substr(0, eq);
    if (eq == std::string::npos || eq == 0 || eq + 1 == entry.size())
      throw RankLogError("--columns: '" + entry + "' is not FIELD=NAME (e.g. loss=train/loss)");
    if (std::find(std::begin(kFields), std::end(kFields), field) == std::end(kFields))
      throw RankLogError("--columns: unknown field '" + field + "' (fields: step, rank, loss, grad_norm, cos_to_mean)");
    if (!mapping.emplace(field, entry.substr(eq + 1)).second) throw RankLogError("--columns: '" + field + "' is mapped twice");
  }
  if (mapping.empty()) throw RankLogError("--columns is empty (e.g. --columns loss=train/loss,step=global_step)");
  return mapping;
}

RankLog read_rank_log(const std::string& path, const ReadOptions& options) {
  if (const auto problem = input_file_problem(path)) throw RankLogError(*problem);
  if (h5::is_hdf5_file(path)) return read_run_log(path);
  TextRows rows;
  const std::string source = read_text_rows(path, Names(options), -1, 0, rows);
  return assemble({source}, rows);
}

RankLog read_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  if (paths.empty()) throw RankLogError("no per-rank files given");
  if (paths.size() == 1) return read_rank_log(paths.front(), options);
  const Names names(options);
  TextRows rows;
  std::vector<std::string> sources;
  for (size_t rank = 0; rank < paths.size(); ++rank) {
    if (h5::is_hdf5_file(paths[rank]))
      throw RankLogError("'" + paths[rank] + "' is an HDF5 run log: it holds every rank already; give it alone");
    sources.push_back(read_text_rows(paths[rank], names, static_cast<int64_t>(rank), rank, rows));
  }
  return assemble(sources, rows);
}

}  // namespace lrkit::diagnostics
