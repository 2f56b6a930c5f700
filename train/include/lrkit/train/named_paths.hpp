#pragma once
// The NAME=PATH lists of the configuration (data.sources, eval.sets).

#include <optional>
#include <string>
#include <vector>

namespace lrkit::train {

// One entry of a NAME=PATH list: its text as written (for messages), its name, and its path where '=' gave one.
struct NamedPath {
  std::string text;
  std::string name;
  std::optional<std::string> path;
};

// The entries of `list`, the value of configuration key `key`, split at the commas outside double quotes (a
// trailing comma ends the list). A PATH in double quotes may hold commas and edge spaces; inside it \" stands for "
// and \\ for \ (any other backslash is the path's own): data.sources = a="runs/1, 2/a.txt". A quote left open, text
// after a closing quote, and a quote inside an unquoted path are errors naming the key and the entry.
std::vector<NamedPath> named_paths(const std::string& key, const std::string& list);

}  // namespace lrkit::train
