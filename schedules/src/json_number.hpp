// A JSON value as a number, as the JSON readers of logs take one: a trainer_state.json's rows, JSON lines, and the
// values Weights & Biases' run logs hold as JSON text.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <system_error>

#include "lrkit/common/json_object.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"

namespace lrkit::schedules {

// A member's value as a number: a JSON number, or the words Python's json writes for the non-finite ones. Empty
// (false) for null: the row holds no value. Throws `fail` for the other kinds.
template <class Fail>
bool number_of(const JsonMember& member, double& out, Fail&& fail) {
  switch (member.kind) {
    case JsonMember::Kind::number: {
      const char* first = member.text.data();
      const char* last = first + member.text.size();
      const auto [end, ec] = chars_to_double(first, last, out);
      // A number past double's range (1e999) is read as Python reads it, an infinity.
      if (ec == std::errc::result_out_of_range) out = member.text.front() == '-' ? -HUGE_VAL : HUGE_VAL;
      else if (ec != std::errc() || end != last) fail("'" + text_for_message(member.text) + "' is not a number");
      return true;
    }
    case JsonMember::Kind::word:
      if (member.text == "null") return false;
      if (member.text == "NaN") out = std::numeric_limits<double>::quiet_NaN();
      else if (member.text == "Infinity") out = HUGE_VAL;
      else if (member.text == "-Infinity") out = -HUGE_VAL;
      else fail("'" + member.text + "' is not a number");
      return true;
    case JsonMember::Kind::string:
      fail("the string \"" + text_for_message(member.text) + "\" is not a number");
      return false;
    case JsonMember::Kind::nested:
      fail("'" + text_for_message(member.text, 40) + "' is not a number");
      return false;
  }
  return false;
}

}  // namespace lrkit::schedules
