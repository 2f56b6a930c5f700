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
// lines is not read) and for text after a closing quote.
inline std::vector<std::string> split_csv_line(const std::string& line, char separator) {
  std::string_view rest(line);
  if (!rest.empty() && rest.back() == '\r') rest.remove_suffix(1);
  const auto blank = [&](char c) { return (c == ' ' || c == '\t') && c != separator; };
  std::vector<std::string> fields;
  size_t i = 0;
  while (true) {
    while (i < rest.size() && blank(rest[i])) ++i;
    std::string field;
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
    fields.push_back(std::move(field));
    if (i >= rest.size()) return fields;
    ++i;  // the separator
  }
}

// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 where the bytes there are no valid one.
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  return n;
}

// A file's text as an error message quotes it: at most `limit` bytes (then "..."), control characters and bytes
// that are no UTF-8 as \xNN, so that a binary file given by mistake cannot garble the terminal.
inline std::string text_for_message(std::string_view text, size_t limit = 80) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < limit) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_sequence_length(text, i);
    if (n > 1 && i + n <= limit) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (n == 1 && c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else if (n > 1) {
      break;  // a character cut by the limit
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    ++i;
  }
  return i < text.size() ? out + "..." : out;
}

}  // namespace lrkit
