// The schedule spec grammar, shared by configs, the CLI and the library:
//   call  := NAME '(' [arg (',' arg)*] ')'      arg := NAME '=' value | value
//   value := call | '[' [value (',' value)*] ']' | number['%'] | word | "quoted"
// Numbers are finite decimals; a trailing % makes a fraction (of the total for
// lengths, of the peak for floor). Words are bare tokens such as 1-sqrt or
// run.h5; quote paths holding spaces, commas or brackets.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lrkit/common/numbers.hpp"

namespace lrkit::schedules {

struct SpecCall;

struct SpecValue {
  enum class Kind { Number, Word, List, Call };
  Kind kind = Kind::Word;
  size_t position = 0;
  std::string text;  // the source token (for messages)
  double number = 0.0;
  bool percent = false;
  std::vector<SpecValue> items;
  std::shared_ptr<const SpecCall> call;
};

struct SpecArg {
  std::string key;  // empty for a positional argument
  size_t key_position = 0;
  SpecValue value;
};

struct SpecCall {
  std::string name;
  size_t position = 0;
  std::vector<SpecArg> args;
};

// Parses a whole spec; throws SpecError (with `spec` in its message) on any
// syntax error. Nesting deeper than 32 levels is refused.
SpecCall parse_spec(const std::string& spec);

using lrkit::format_number;  // a spec's numbers print as every lrkit message's do
// Renders a word, quoting it when it would not lex back as one word.
std::string format_word(const std::string& word);

}  // namespace lrkit::schedules
