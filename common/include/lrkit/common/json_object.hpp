// One JSON object read in one pass, its members' names and values as text: a line of a JSON-lines log (what the
// per-rank log reader needs of a line), or a whole JSON file such as a Hugging Face Trainer's trainer_state.json.
// Boost's property_tree parser, used before, built a tree of strings for every line and was most of the time
// `lrkit diagnose` took on a large log.
//
// The grammar is RFC 8259's, and three words more: Python's json module writes the non-finite numbers of a diverging
// worker as the bare words NaN, Infinity and -Infinity.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lrkit {

// Why a text is not one JSON object: what() ends with the character (counted from 1) where reading stopped; a reader
// of a file of many lines turns offset() into a line and column.
class JsonError : public std::runtime_error {
 public:
  JsonError(const std::string& reason, size_t offset)
      : std::runtime_error(reason + " at character " + std::to_string(offset + 1)), reason_(reason), offset_(offset) {}
  const std::string& reason() const { return reason_; }
  size_t offset() const { return offset_; }  // from 0

 private:
  std::string reason_;
  size_t offset_;
};

struct JsonMember {
  enum class Kind { number, string, word, nested };  // word: true, false, null, NaN, Infinity, -Infinity
  std::string name;  // with its escapes decoded
  Kind kind = Kind::number;
  // A number's or a word's text as written; a string's content, escapes decoded; an object's or array's text whole.
  std::string text;
  size_t at = 0, end = 0;  // where the value starts in the text parsed, and where it ends (offsets from 0)
};

class JsonObject {
 public:
  // How an object's or array's text is kept: copied into the member's text, or only located by its `at` and `end`
  // (its text left empty), where the caller keeps `text` and the value is large (a trainer_state.json's log_history).
  enum class Nested { copied, located };
  // Reads `text` (blanks, line breaks included, around the object allowed). Throws JsonError where it is not one
  // object. The members' texts are copies: `text` need not outlive the call.
  void parse(std::string_view text, Nested nested = Nested::copied);
  // The first member of that name: the object's own members, not those nested in them. Null where there is none.
  // With `repeat`, the search goes on past it: *repeat is the next member of that name, null where there is none.
  const JsonMember* find(std::string_view name, const JsonMember** repeat = nullptr) const;
  size_t size() const { return count_; }
  const JsonMember& operator[](size_t i) const { return members_[i]; }  // the object's members in order, i < size()
  // An object built member by member, where its members come apart (a W&B history row's items): clear(), then fill
  // in each member add() gives (its storage reused from object to object).
  void clear() { count_ = 0; }
  JsonMember& add();
  JsonMember& operator[](size_t i) { return members_[i]; }

 private:
  // Reused from text to text, so that a member's strings keep their storage.
  std::vector<JsonMember> members_;
  size_t count_ = 0;
};

// One JSON value, the whole of `text` (blanks around it allowed): a number, a string, a word or an object's or
// array's text (copied), as a member's value is read. Throws JsonError where `text` is not one value.
void parse_json_value(std::string_view text, JsonMember& out);

// The elements of a JSON array, given whole from its '[' (as a nested member's text), each as its text: views into
// `array_text`. Throws JsonError where it is not one array.
std::vector<std::string_view> json_array_elements(std::string_view array_text);

}  // namespace lrkit
