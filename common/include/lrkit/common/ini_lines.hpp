// Where a key or a line stands in an INI file (the train and sweep configs), read as
// boost::program_options reads it: its errors name neither the line of a bad value nor of a bad line, and
// in a file of a hundred lines, or one key set in two files, the line is what finds the problem.
#pragma once

#include <algorithm>
#include <cctype>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace lrkit {

// `s` without leading and trailing blanks, as Boost trims an INI file's keys and values (its trim_ws).
inline std::string trim_blanks(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// A line whose first non-blank character is ';' is a comment in INI files (Python's configparser writes and reads
// them), which Boost refuses as "an invalid line": here it is one, blanked, so that the line numbers stay.
inline bool ini_semicolon_comment(const std::string& line) {
  const auto first = line.find_first_not_of(" \t");
  return first != std::string::npos && line[first] == ';';
}

// `text` as Boost is to parse it: ';' comment lines emptied (a '#' starts a comment anywhere, as Boost has it).
inline std::string ini_text_for_parsing(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::string line, out;
  while (std::getline(in, line)) out += (ini_semicolon_comment(line) ? "" : line) + "\n";
  return out;
}

namespace ini_detail {

// Calls visit(line number from 1, the line as Boost sees it: comment cut, trimmed; its full key
// "section.name", empty where the line sets none) for each line until visit returns true; that line's number.
template <class Visit>
std::optional<size_t> find_line(std::string_view text, Visit visit) {
  std::istringstream in{std::string(text)};
  std::string line, prefix;
  for (size_t number = 1; std::getline(in, line); ++number) {
    line = ini_semicolon_comment(line) ? "" : trim_blanks(line.substr(0, line.find('#')));
    std::string key;
    if (!line.empty() && line.front() == '[' && line.back() == ']') {
      prefix = line.substr(1, line.size() - 2);
      if (!prefix.empty() && prefix.back() != '.') prefix += '.';
    } else if (const auto equals = line.find('='); equals != std::string::npos) {
      key = prefix + trim_blanks(line.substr(0, equals));
    }
    if (visit(line, key)) return number;
  }
  return std::nullopt;
}

}  // namespace ini_detail

// The line (from 1) of the `occurrence`-th line that sets `key` ("train.steps": `steps = ...` under [train], or
// `train.steps = ...` before any section), or nothing.
inline std::optional<size_t> ini_line_of_key(std::string_view text, const std::string& key, size_t occurrence = 1) {
  size_t seen = 0;
  return ini_detail::find_line(text, [&](const std::string&, const std::string& k) { return k == key && ++seen == occurrence; });
}

// The line (from 1) that Boost reports as `line` (comment cut, trimmed), or nothing.
inline std::optional<size_t> ini_line_of_text(std::string_view text, const std::string& line) {
  return ini_detail::find_line(text, [&](const std::string& l, const std::string&) { return l == line; });
}

// The lines of `text` that set those of `keys` that `message` names as whole words ("train.batch (30)" names
// train.batch, "train.batches" does not), in the order of `keys`: where an error of a rule across keys points.
inline std::vector<size_t> ini_lines_of_keys_named(std::string_view text, const std::string& message,
                                                   const std::vector<std::string>& keys) {
  const auto part_of_name = [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '.'; };
  const auto names = [&](const std::string& key) {
    for (auto at = message.find(key); at != std::string::npos; at = message.find(key, at + 1)) {
      const size_t end = at + key.size();
      const bool starts_word = at == 0 || !part_of_name(message[at - 1]);
      const bool ends_word = end == message.size() || !part_of_name(message[end]) || message[end] == '.';  // a full stop
      if (starts_word && ends_word) return true;
    }
    return false;
  };
  std::vector<size_t> lines;
  for (const auto& key : keys)
    if (names(key))
      if (const auto line = ini_line_of_key(text, key)) lines.push_back(*line);
  return lines;
}

// "'FILE' line N" where the line is known, else "'FILE'": how an error names a place in a config file.
inline std::string ini_place(const std::string& file, std::optional<size_t> line) {
  return "'" + file + "'" + (line ? " line " + std::to_string(*line) : "");
}

// "'FILE' lines 4 and 9" (or "line 4", "lines 4, 7 and 9"; "'FILE'" for none): a rule across keys set on several lines.
inline std::string ini_place(const std::string& file, std::vector<size_t> lines) {
  std::sort(lines.begin(), lines.end());
  lines.erase(std::unique(lines.begin(), lines.end()), lines.end());
  if (lines.size() < 2) return ini_place(file, lines.empty() ? std::nullopt : std::optional<size_t>(lines.front()));
  std::string listed;
  for (size_t i = 0; i < lines.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == lines.size() ? " and " : ", ") + std::to_string(lines[i]);
  return "'" + file + "' lines " + listed;
}

}  // namespace lrkit
