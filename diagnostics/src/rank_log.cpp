#include "lrkit/diagnostics/rank_log.hpp"

#include <boost/property_tree/json_parser.hpp>
#include <boost/property_tree/ptree.hpp>

#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "lrkit/common/input_file.hpp"
#include "lrkit/h5/file.hpp"

namespace lrkit::diagnostics {

namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

RankLog read_run_log(const std::string& path) {
  RankLog log;
  log.source = path + " (lrkit run log)";
  try {
    for (const char* required : {"/train/step", "/ranks/loss", "/ranks/grad_norm"})
      if (!h5::has_dataset(path, required))
        throw RankLogError("'" + path + "' has no dataset " + required + " (is it an lrkit run log?)");
    log.steps = h5::read_series(path, "/train/step");
    const auto loss = h5::read_matrix(path, "/ranks/loss");
    const auto norm = h5::read_matrix(path, "/ranks/grad_norm");
    log.ranks = loss.columns;
    auto check_rows = [&](const std::string& name, int64_t rows, int64_t columns) {
      if (rows != static_cast<int64_t>(log.steps.size()) || columns != log.ranks)
        throw RankLogError("'" + path + "': " + name + " is [" + std::to_string(rows) + ", " + std::to_string(columns) +
                           "] but /train/step has " + std::to_string(log.steps.size()) + " rows and /ranks/loss " +
                           std::to_string(log.ranks) + " ranks");
    };
    check_rows("/ranks/loss", loss.rows, loss.columns);
    check_rows("/ranks/grad_norm", norm.rows, norm.columns);
    log.loss = loss.values;
    log.grad_norm = norm.values;
    if (h5::has_dataset(path, "/ranks/cos_to_mean")) {
      const auto cos = h5::read_matrix(path, "/ranks/cos_to_mean");
      check_rows("/ranks/cos_to_mean", cos.rows, cos.columns);
      log.cos_to_mean = cos.values;
    }
    auto check_length = [&](const std::string& name, size_t rows) {
      if (rows != log.steps.size())
        throw RankLogError("'" + path + "': " + name + " has " + std::to_string(rows) + " rows but /train/step has " +
                           std::to_string(log.steps.size()));
    };
    log.global_grad_norm = h5::read_series(path, "/train/grad_norm");
    check_length("/train/grad_norm", log.global_grad_norm.size());
    if (h5::has_dataset(path, "/diagnostics/cos_pairwise")) {
      auto cos = h5::read_series(path, "/diagnostics/cos_pairwise");
      check_length("/diagnostics/cos_pairwise", cos.size());
      bool measured = false;
      for (double c : cos) measured = measured || !std::isnan(c);
      if (measured) log.cos_pairwise = std::move(cos);
    }
  } catch (const h5::Error& e) {
    throw RankLogError(e.what());
  }
  return log;
}

struct Row {
  double step = 0;
  int64_t rank = 0;
  double loss = 0, grad_norm = 0, cos_to_mean = std::nan("");
  bool has_cos = false;
};

// Rows of every (step, rank) pair into the [step, rank] layout; the pairs must form a full grid.
RankLog assemble(const std::string& source, const std::vector<Row>& rows, const std::vector<size_t>& lines) {
  if (rows.empty()) throw RankLogError(source + ": no rows");
  std::map<double, std::map<int64_t, size_t>> grid;
  int64_t ranks = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.rank < 0 || r.rank > 65535)
      throw RankLogError(source + " line " + std::to_string(lines[i]) + ": rank " + std::to_string(r.rank) + " is out of range");
    if (!grid[r.step].emplace(r.rank, i).second)
      throw RankLogError(source + " line " + std::to_string(lines[i]) + ": step " + std::to_string(static_cast<long long>(r.step)) +
                         " rank " + std::to_string(r.rank) + " appears twice");
    ranks = std::max(ranks, r.rank + 1);
  }
  const bool has_cos = rows.front().has_cos;
  RankLog log;
  log.source = source;
  log.ranks = ranks;
  for (const auto& [step, by_rank] : grid) {
    if (static_cast<int64_t>(by_rank.size()) != ranks) {
      int64_t missing = 0;
      while (by_rank.count(missing)) ++missing;
      throw RankLogError(source + ": step " + std::to_string(static_cast<long long>(step)) + " has no row for rank " +
                         std::to_string(missing) + " (" + std::to_string(ranks) + " ranks appear in the file)");
    }
    log.steps.push_back(step);
    for (const auto& [rank, index] : by_rank) {
      const auto& r = rows[index];
      if (r.has_cos != has_cos)
        throw RankLogError(source + " line " + std::to_string(lines[index]) + ": cos_to_mean must be given on every row or none");
      log.loss.push_back(r.loss);
      log.grad_norm.push_back(r.grad_norm);
      if (has_cos) log.cos_to_mean.push_back(r.cos_to_mean);
    }
  }
  return log;
}

double parse_number(const std::string& text, const std::string& where) {
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  while (used < text.size() && std::isspace(static_cast<unsigned char>(text[used]))) ++used;
  if (text.empty() || used != text.size()) throw RankLogError(where + ": '" + text + "' is not a number");
  return value;
}

RankLog read_csv(const std::string& path, std::istream& in) {
  const std::string source = path + " (CSV)";
  std::string line;
  if (!std::getline(in, line)) throw RankLogError(source + ": empty file (expected a header step,rank,loss,grad_norm)");
  std::map<std::string, size_t> column;
  std::vector<std::string> header;
  {
    std::istringstream fields(line);
    std::string name;
    while (std::getline(fields, name, ',')) {
      name.erase(0, name.find_first_not_of(" \t\r"));
      name.erase(name.find_last_not_of(" \t\r") + 1);
      column[name] = header.size();
      header.push_back(name);
    }
  }
  for (const char* required : {"step", "rank", "loss", "grad_norm"})
    if (!column.count(required)) throw RankLogError(source + " header: no column '" + required + "' (have: " + line + ")");
  const bool has_cos = column.count("cos_to_mean") > 0;
  std::vector<Row> rows;
  std::vector<size_t> lines;
  for (size_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<std::string> fields;
    std::istringstream split(line);
    std::string field;
    while (std::getline(split, field, ',')) fields.push_back(field);
    if (fields.size() != header.size())
      throw RankLogError(source + " line " + std::to_string(number) + ": " + std::to_string(fields.size()) +
                         " fields, the header has " + std::to_string(header.size()) + " (truncated file?)");
    auto value = [&](const char* name) {
      return parse_number(fields[column[name]], source + " line " + std::to_string(number) + " column " + name);
    };
    Row r;
    r.step = value("step");
    r.rank = static_cast<int64_t>(value("rank"));
    r.loss = value("loss");
    r.grad_norm = value("grad_norm");
    if (has_cos) {
      r.cos_to_mean = value("cos_to_mean");
      r.has_cos = true;
    }
    rows.push_back(r);
    lines.push_back(number);
  }
  return assemble(source, rows, lines);
}

RankLog read_json_lines(const std::string& path, std::istream& in) {
  namespace pt = boost::property_tree;
  const std::string source = path + " (JSON lines)";
  std::vector<Row> rows;
  std::vector<size_t> lines;
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = source + " line " + std::to_string(number);
    pt::ptree object;
    try {
      std::istringstream text(line);
      pt::read_json(text, object);
    } catch (const pt::json_parser_error& e) {
      throw RankLogError(where + ": not a JSON object (" + e.message() + "; truncated file?)");
    }
    auto value = [&](const char* name) {
      const auto child = object.get_optional<std::string>(name);
      if (!child) throw RankLogError(where + ": no field '" + name + "'");
      return parse_number(*child, where + " field " + name);
    };
    Row r;
    r.step = value("step");
    r.rank = static_cast<int64_t>(value("rank"));
    r.loss = value("loss");
    r.grad_norm = value("grad_norm");
    if (object.get_optional<std::string>("cos_to_mean")) {
      r.cos_to_mean = value("cos_to_mean");
      r.has_cos = true;
    }
    rows.push_back(r);
    lines.push_back(number);
  }
  return assemble(source, rows, lines);
}

}  // namespace

RankLog read_rank_log(const std::string& path) {
  if (const auto problem = input_file_problem(path)) throw RankLogError(*problem);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw RankLogError("cannot open '" + path + "'");
  if (h5::is_hdf5_file(path)) return read_run_log(path);
  if (ends_with(path, ".csv")) return read_csv(path, in);
  if (ends_with(path, ".jsonl") || ends_with(path, ".json")) return read_json_lines(path, in);
  throw RankLogError("'" + path + "' is neither an HDF5 run log nor a .csv / .jsonl per-rank log");
}

}  // namespace lrkit::diagnostics
