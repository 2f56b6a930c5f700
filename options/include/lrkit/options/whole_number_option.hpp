// Whole-number options that read as config files' whole-number keys do (parse_integer):
// `--steps 1e4` and `--steps 2.5e4` as well as `--steps 10000`. Boost's own reading of an int64_t refuses
// the exponent form, so a run length written one way in a config file was refused on the command line.
#pragma once

#include <boost/program_options.hpp>

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "lrkit/common/numbers.hpp"

namespace lrkit::options {

struct WholeNumber {
  int64_t value = 0;
};

inline std::ostream& operator<<(std::ostream& os, const WholeNumber& n) { return os << n.value; }  // --help's defaults

// Found by argument-dependent lookup from Boost's typed_value<WholeNumber>; a refusal is Boost's own
// "the argument ('1.5') for option '--steps' is invalid".
inline void validate(boost::any& out, const std::vector<std::string>& tokens, WholeNumber*, int) {
  namespace po = boost::program_options;
  po::validators::check_first_occurrence(out);
  const std::string& text = po::validators::get_single_string(tokens);
  const auto parsed = parse_integer(text);
  if (!parsed) throw po::invalid_option_value(text);
  out = WholeNumber{*parsed};
}

// An option stored into `target` when given (po::notify), its current value shown as the default.
inline boost::program_options::typed_value<WholeNumber>* whole_number(int64_t* target) {
  return boost::program_options::value<WholeNumber>()
      ->default_value(WholeNumber{*target})
      ->notifier([target](const WholeNumber& n) { *target = n.value; });
}

// An option without a default: `target` holds a value only when it was given.
inline boost::program_options::typed_value<WholeNumber>* whole_number(std::optional<int64_t>* target) {
  return boost::program_options::value<WholeNumber>()->notifier([target](const WholeNumber& n) { *target = n.value; });
}

}  // namespace lrkit::options
