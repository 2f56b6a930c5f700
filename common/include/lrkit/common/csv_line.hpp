// The fields of one line of a CSV or TSV file, as RFC 4180 writes them: every reader of tabular text
// (table and refined schedules, lrkit diagnose's per-rank logs) splits lines here. Exports quote fields: R's
// write.csv and Weights & Biases quote every header name, Python's csv module any field with a comma.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lrkit {

// A field in double quotes may hold the separator, and "" inside it stands for one quote; space and tab
// around a field (outside its quotes) and a line's trailing '\r' are dropped. "a,b," has three fields, the last
// empty. Throws std::invalid_argument for a quote opened and not closed on the line (a field running over
// lines is not read) and for text after a closing quote. The fields go into `fields`, whose strings keep their
// storage for the next line: a reader of a large file then allocates nothing per line.
inline void split_csv_line(std::string_view line, char separator, std::vector<std::string>& fields) {
  std::string_view rest(line);
  if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  const auto blank = [&](char c) { return (c == ' ' || c == '\t') && c != separator; };
  size_t count = 0;
  size_t i = 0;
  while (true) {
    while (i < rest.size() && blank(rest[i])) ++i;
    if (count == fields.size()) fields.emplace_back();
    std::string& field = fields[count++];
    field.clear();
    if (i < rest.size() && rest[i] == '"') {
      const size_t opened = i++;
      while (true) {
        if (i >= rest.size())
          throw std::invalid_argument("the quote at character " + std::to_string(opened + 1) + " is not closed on its line");
        if (rest[i] == '"') {
          if (i + 1 < rest.size() && rest[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += rest[i++];
      }
      while (i < rest.size() && blank(rest[i])) ++i;
      if (i < rest.size() && rest[i] != separator)
        throw std::invalid_argument("text after the closing quote at character " + std::to_string(i) +
                                    " (a quote inside a quoted field is written \"\")");
    } else {
      const size_t end = std::min(rest.find(separator, i), rest.size());
      size_t last = end;
      while (last > i && blank(rest[last - 1])) --last;
      field.assign(rest.substr(i, last - i));
      i = end;
    }
    if (i >= rest.size()) {
      fields.resize(count);
      return;
    }
    ++i;  // the separator
  }
}

// The same fields as a new vector.
inline std::vector<std::string> split_csv_line(const std::string& line, char separator) {
  std::vector<std::string> fields;
  split_csv_line(line, separator, fields);
  return fields;
}

}  // namespace lrkit
