// One line of a JSON-lines log read as one JSON object, its members' names and values as text: what the per-rank
// log reader needs of a line, read in one pass over it. Boost's property_tree parser, used before, built a tree of
// strings for every line and was most of the time `lrkit diagnose` took on a large log.
//
// The grammar is RFC 8259's, and three words more: Python's json module writes the non-finite numbers of a diverging
// worker as the bare words NaN, Infinity and -Infinity.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lrkit::diagnostics {

// Why a line is not one JSON object, with the character (counted from 1) where reading stopped.
class JsonLineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct JsonMember {
  enum class Kind { number, string, word, nested };  // word: true, false, null, NaN, Infinity, -Infinity
  std::string name;  // with its escapes decoded
  Kind kind = Kind::number;
  // A number's or a word's text as written; a string's content, escapes decoded; an object's or array's text whole.
  std::string text;
};

class JsonObjectLine {
 public:
  // Reads `line` (blanks around the object allowed). Throws JsonLineError where it is not one object.
  void parse(std::string_view line);
  // The first member of that name: the object's own members, not those nested in them. Null where there is none.
  // With `repeat`, the search goes on past it: *repeat is the next member of that name, null where there is none.
  const JsonMember* find(std::string_view name, const JsonMember** repeat = nullptr) const;
  size_t size() const { return count_; }
  const JsonMember& operator[](size_t i) const { return members_[i]; }  // the object's members in order, i < size()

 private:
  // Reused from line to line, so that a member's strings keep their storage.
  std::vector<JsonMember> members_;
  size_t count_ = 0;
};

}  // namespace lrkit::diagnostics
