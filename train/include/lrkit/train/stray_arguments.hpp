// The words of a command line that belong to no option. Boost's parser, given no positional arguments to expect,
// drops them without a word: `lrkit train quickstart.cfg` (without --config) trained the default configuration.
#pragma once

#include <boost/program_options.hpp>

#include <string>
#include <vector>

namespace lrkit::train {

// "unexpected argument 'X': lrkit COMMAND takes options only (WHAT)" for the first stray word of `parsed`, or "".
inline std::string stray_argument_message(const boost::program_options::parsed_options& parsed, const std::string& command,
                                          const std::string& what) {
  for (const auto& option : parsed.options)
    if (option.string_key.empty() && !option.original_tokens.empty())
      return "unexpected argument '" + option.original_tokens.front() + "': lrkit " + command + " takes options only (" +
             what + ")";
  return "";
}

}  // namespace lrkit::train
