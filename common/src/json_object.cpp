#include "lrkit/common/json_object.hpp"

#include <cstdint>

namespace lrkit {

namespace {

constexpr int kDeepest = 256;  // nesting levels: a deeper text is refused before it runs the stack out

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(uint32_t code, std::string& out) {
  if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

// Reads one text from its start; `at_` is where it stands. A null destination skips what it reads (checked all the
// same: a nested value, or a nested object's names).
class Reader {
 public:
  explicit Reader(std::string_view text, bool copy_nested = true) : text_(text), copy_nested_(copy_nested) {}

  void skip_blanks() {
    while (at_ < text_.size() && is_blank(text_[at_])) ++at_;
  }
  bool at_end() const { return at_ >= text_.size(); }
  bool at(char c, size_t ahead = 0) const { return at_ + ahead < text_.size() && text_[at_ + ahead] == c; }

  [[noreturn]] void fail(const std::string& what) const { throw JsonError(what, at_); }

  // An object from its '{'; `member()` reads each member in turn, from its name's opening quote.
  template <class Member>
  void object(Member&& member) {
    elements('}', "the object", "a member", [&] {
      if (!at('"')) fail(at_end() ? "the text ends inside the object" : "expected a member's name in double quotes");
      member();
    });
  }

  // A member: its name into `name`, its value into `value` (both null: skipped).
  void member(std::string* name, JsonMember* value, int depth) {
    string(name);
    skip_blanks();
    if (!at(':')) fail(at_end() ? "the text ends inside the object" : "expected ':' after a member's name");
    ++at_;
    skip_blanks();
    this->value(value, depth);
  }

  void value(JsonMember* out, int depth) {
    if (at_end()) fail("the text ends where a value should be");
    const size_t start = at_;
    if (out) out->at = start;
    const char c = text_[at_];
    if (c == '{' || c == '[') {
      if (depth >= kDeepest) fail("values nested deeper than " + std::to_string(kDeepest) + " levels");
      if (c == '{') {
        object([&] { member(nullptr, nullptr, depth + 1); });
      } else {
        array(depth + 1, [](size_t, size_t) {});
      }
      if (out) {
        out->kind = JsonMember::Kind::nested;
        out->end = at_;
        if (copy_nested_) {
          out->text.assign(text_.substr(start, at_ - start));
        } else {
          out->text.clear();
        }
      }
      return;
    }
    if (c == '"') {
      string(out ? &out->text : nullptr);
      if (out) {
        out->kind = JsonMember::Kind::string;
        out->end = at_;
      }
      return;
    }
    const bool may_be_word = c == 't' || c == 'f' || c == 'n' || c == 'N' || c == 'I' || (c == '-' && at('I', 1));
    for (const std::string_view word : {"true", "false", "null", "NaN", "Infinity", "-Infinity"}) {
      if (!may_be_word) break;  // a number, the common value, is not compared with each word
      if (text_.compare(at_, word.size(), word) != 0) continue;
      at_ += word.size();
      if (out) {
        out->kind = JsonMember::Kind::word;
        out->text.assign(word);
        out->end = at_;
      }
      return;
    }
    if (c != '-' && !is_digit(c)) fail("expected a value (a number, a string, an object, an array, true, false or null)");
    number();
    if (out) {
      out->kind = JsonMember::Kind::number;
      out->text.assign(text_.substr(start, at_ - start));
      out->end = at_;
    }
  }

  // An array from its '['; `element(first, end)` is told where each element's text lies.
  template <class Element>
  void array(int depth, Element&& element) {
    elements(']', "an array", "an array's element", [&] {
      const size_t first = at_;
      value(nullptr, depth);
      element(first, at_);
    });
  }

 private:
  // An object's or array's elements, from its opening bracket to `close`: `element()` reads each, separated by commas.
  template <class Element>
  void elements(char close, const char* inside, const char* element_name, Element&& element) {
    ++at_;  // the opening bracket
    skip_blanks();
    if (at(close)) {
      ++at_;
      return;
    }
    while (true) {
      skip_blanks();
      element();
      skip_blanks();
      if (at(',')) {
        ++at_;
        continue;
      }
      if (at(close)) {
        ++at_;
        return;
      }
      fail(at_end() ? std::string("the text ends inside ") + inside
                    : std::string("expected ',' or '") + close + "' after " + element_name);
    }
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
  void number() {
    if (at('-')) ++at_;
    const auto digits = [&](const char* after) {
      if (at_end() || !is_digit(text_[at_])) fail(std::string("expected a digit ") + after);
      while (at_ < text_.size() && is_digit(text_[at_])) ++at_;
    };
    if (at('0')) {
      ++at_;
    } else {
      digits("in a number");
    }
    if (at('.')) {
      ++at_;
      digits("after a number's '.'");
    }
    if (at('e') || at('E')) {
      ++at_;
      if (at('+') || at('-')) ++at_;
      digits("in a number's exponent");
    }
  }

  // A string from its opening quote, its content decoded into `out` (null: checked only).
  void string(std::string* out) {
    ++at_;  // the opening quote
    if (out) out->clear();
    while (true) {
      const size_t plain = at_;  // a run of characters that stand for themselves, copied at once
      while (at_ < text_.size() && text_[at_] != '"' && text_[at_] != '\\' && static_cast<unsigned char>(text_[at_]) >= 0x20)
        ++at_;
      if (out) out->append(text_.data() + plain, at_ - plain);
      if (at_end()) fail("the text ends inside a string");
      const char c = text_[at_];
      if (c == '"') {
        ++at_;
        return;
      }
      if (c != '\\') fail("a control character inside a string (JSON writes it as an escape, \\u00XX)");
      ++at_;
      escape(out);
    }
  }

  // The escape after a backslash.
  void escape(std::string* out) {
    if (at_end()) fail("the text ends inside a string");
    const char c = text_[at_++];
    char plain = 0;
    switch (c) {
      case '"': plain = '"'; break;
      case '\\': plain = '\\'; break;
      case '/': plain = '/'; break;
      case 'b': plain = '\b'; break;
      case 'f': plain = '\f'; break;
      case 'n': plain = '\n'; break;
      case 'r': plain = '\r'; break;
      case 't': plain = '\t'; break;
      case 'u': break;
      default: --at_; fail(std::string("'\\") + c + "' is not an escape of JSON");
    }
    if (plain) {
      if (out) *out += plain;
      return;
    }
    uint32_t code = code_unit();
    // A pair of UTF-16 surrogates is one character; a lone one is kept as its own code (WTF-8, as Python's
    // surrogatepass writes it), so a file name or note that holds one does not cost the row.
    if (code >= 0xD800 && code < 0xDC00 && text_.compare(at_, 2, "\\u") == 0) {
      const size_t before = at_;
      at_ += 2;
      const uint32_t low = code_unit();
      if (low >= 0xDC00 && low < 0xE000) {
        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
      } else {
        at_ = before;
      }
    }
    if (out) append_utf8(code, *out);
  }

  // The four hex digits after "\u".
  uint32_t code_unit() {
    uint32_t code = 0;
    for (int i = 0; i < 4; ++i, ++at_) {
      const int digit = at_end() ? -1 : hex_value(text_[at_]);
      if (digit < 0) fail("expected four hex digits after '\\u'");
      code = code * 16 + static_cast<uint32_t>(digit);
    }
    return code;
  }

  std::string_view text_;
  bool copy_nested_;
  size_t at_ = 0;
};

}  // namespace

void JsonObject::parse(std::string_view text, Nested nested) {
  count_ = 0;
  Reader reader(text, nested == Nested::copied);
  reader.skip_blanks();
  if (!reader.at('{')) reader.fail("expected '{'");
  reader.object([&] {
    if (count_ == members_.size()) members_.emplace_back();
    JsonMember& member = members_[count_++];
    reader.member(&member.name, &member, 0);
  });
  reader.skip_blanks();
  if (!reader.at_end()) reader.fail("text after the object");
}

JsonMember& JsonObject::add() {
  if (count_ == members_.size()) members_.emplace_back();
  return members_[count_++];
}

void parse_json_value(std::string_view text, JsonMember& out) {
  Reader reader(text);
  reader.skip_blanks();
  reader.value(&out, 0);
  reader.skip_blanks();
  if (!reader.at_end()) reader.fail("text after the value");
}

std::vector<std::string_view> json_array_elements(std::string_view array_text) {
  std::vector<std::string_view> elements;
  Reader reader(array_text);
  reader.skip_blanks();
  if (!reader.at('[')) reader.fail("expected '['");
  reader.array(0, [&](size_t first, size_t end) { elements.push_back(array_text.substr(first, end - first)); });
  reader.skip_blanks();
  if (!reader.at_end()) reader.fail("text after the array");
  return elements;
}

const JsonMember* JsonObject::find(std::string_view name, const JsonMember** repeat) const {
  const JsonMember* found = nullptr;
  if (repeat) *repeat = nullptr;
  for (size_t i = 0; i < count_; ++i) {
    if (members_[i].name != name) continue;
    if (found) {
      *repeat = &members_[i];
      break;
    }
    found = &members_[i];
    if (!repeat) break;
  }
  return found;
}

}  // namespace lrkit
