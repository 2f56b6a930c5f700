// The option a command line's unknown one most likely meant, for Boost's "unrecognised option" messages of every
// lrkit command: "--windw" -> "; did you mean --window?".
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

#include "lrkit/common/closest_name.hpp"

namespace lrkit::options {

// The unknown option as a key: without its dashes and "=value" ("--train.stepz=5" -> "train.stepz").
inline std::string unknown_option_name(const boost::program_options::unknown_option& e) {
  std::string name = e.get_option_name();
  name.erase(0, name.find_first_not_of('-'));
  return name.substr(0, name.find('='));
}

// Every long option name of `known`.
inline std::vector<std::string> long_option_names(const boost::program_options::options_description& known) {
  std::vector<std::string> names;
  for (const auto& option : known.options())
    if (!option->long_name().empty()) names.push_back(option->long_name());
  return names;
}

// "; did you mean --NAME?" for the known option closest to the unknown one, or "" where none is close.
inline std::string did_you_mean_option(const boost::program_options::unknown_option& e,
                                       const boost::program_options::options_description& known) {
  const auto meant = closest_name(unknown_option_name(e), long_option_names(known));
  return meant ? "; did you mean --" + *meant + "?" : "";
}

}  // namespace lrkit::options
