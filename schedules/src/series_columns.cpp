#include "series_columns.hpp"

#include <algorithm>

namespace lrkit::schedules {

namespace {

void add_once(std::vector<std::string>& names, const std::string& name) {
  if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
}

}  // namespace

std::vector<std::string> column_names_for(const std::string& dataset) {
  std::vector<std::string> names;
  const size_t first = dataset.find_first_not_of('/');
  add_once(names, first == std::string::npos ? std::string() : dataset.substr(first));
  add_once(names, dataset.substr(dataset.find_last_of('/') + 1));
  return names;
}

std::vector<std::string> step_column_names_for(const std::string& steps_dataset) {
  if (steps_dataset.empty()) return {};
  std::vector<std::string> names = column_names_for(steps_dataset);
  for (const char* other : {"step", "Step", "_step", "global_step", "trainer/global_step"}) add_once(names, other);
  return names;
}

std::string names_for_message(const std::vector<std::string>& names) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "'" : i + 1 == names.size() ? " or '" : ", '") + names[i] + "'";
  return out;
}

}  // namespace lrkit::schedules
