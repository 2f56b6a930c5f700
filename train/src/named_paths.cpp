#include "lrkit/train/named_paths.hpp"

#include <stdexcept>

#include "lrkit/common/ini_lines.hpp"

namespace lrkit::train {
namespace {

// `written` (after '=', trimmed) as a path: a quoted one unquoted.
std::string path_of(const std::string& key, size_t index, const NamedPath& entry, const std::string& written) {
  const std::string place = key + " entry " + std::to_string(index) + " ('" + entry.text + "')";
  if (written.empty() || written.front() != '"') {
    if (written.find('"') != std::string::npos)
      throw std::invalid_argument(place + ": a '\"' inside a path; write the whole path in double quotes, with \\\" "
                                  "for each '\"' in it");
    return written;
  }
  std::string path;
  size_t i = 1;
  for (; i < written.size() && written[i] != '"'; ++i) {
    if (written[i] == '\\' && i + 1 < written.size() && (written[i + 1] == '"' || written[i + 1] == '\\')) ++i;
    path += written[i];  // any other backslash is the path's own
  }
  if (i + 1 != written.size())  // the splitter closed every quote: the closing one is followed by more text
    throw std::invalid_argument(place + ": text after the quoted path ('" + written.substr(i + 1) +
                                "'); a comma separates entries");
  return path;
}

NamedPath entry_of(const std::string& key, size_t index, const std::string& text) {
  NamedPath entry;
  entry.text = text;
  const auto equals = text.find('=');
  if (equals == std::string::npos || text.find('"') < equals) {
    entry.name = text;  // no name: the caller refuses it in its own words
    return entry;
  }
  entry.name = trim_blanks(text.substr(0, equals));
  entry.path = path_of(key, index, entry, trim_blanks(text.substr(equals + 1)));
  return entry;
}

}  // namespace

std::vector<NamedPath> named_paths(const std::string& key, const std::string& list) {
  std::vector<NamedPath> entries;
  size_t start = 0;
  while (start < list.size()) {
    bool quoted = false;
    size_t opened = 0;
    size_t end = start;
    for (; end < list.size(); ++end) {
      if (quoted && list[end] == '\\' && end + 1 < list.size()) {
        ++end;  // an escaped character, a quote or a comma among them
      } else if (list[end] == '"') {
        quoted = !quoted;
        opened = end;
      } else if (list[end] == ',' && !quoted) {
        break;
      }
    }
    if (quoted)
      throw std::invalid_argument(key + ": the quote at character " + std::to_string(opened + 1) +
                                  " is never closed ('" + list + "')");
    entries.push_back(entry_of(key, entries.size() + 1, trim_blanks(list.substr(start, end - start))));
    start = end + 1;
  }
  return entries;
}

}  // namespace lrkit::train
