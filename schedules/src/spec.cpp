#include "lrkit/schedules/spec.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <system_error>

#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/spec_error.hpp"

namespace lrkit::schedules {

namespace {

constexpr int kMaxDepth = 32;

bool is_delimiter(char c) {
  return c == '(' || c == ')' || c == '[' || c == ']' || c == ',' || c == '=' || c == '"' ||
         std::isspace(static_cast<unsigned char>(c));
}

bool is_identifier(const std::string& word) {
  if (word.empty() || !(std::isalpha(static_cast<unsigned char>(word[0])) || word[0] == '_')) return false;
  for (char c : word)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

enum class Tok { Word, Quoted, Open, Close, OpenList, CloseList, Comma, Equals, End };

struct Token {
  Tok kind = Tok::End;
  size_t position = 0;
  std::string text;
};

const char* describe(Tok kind) {
  switch (kind) {
    case Tok::Word: return "a word or number";
    case Tok::Quoted: return "a quoted string";
    case Tok::Open: return "'('";
    case Tok::Close: return "')'";
    case Tok::OpenList: return "'['";
    case Tok::CloseList: return "']'";
    case Tok::Comma: return "','";
    case Tok::Equals: return "'='";
    case Tok::End: return "the end of the spec";
  }
  return "?";
}

class Parser {
 public:
  explicit Parser(const std::string& spec) : spec_(spec) { advance(); }

  SpecCall parse_root() {
    if (current_.kind != Tok::Word) fail(current_, "a spec starts with a schedule name such as cosine(...)");
    const Token name = current_;
    advance();
    SpecCall call = parse_call(name, 0);
    if (current_.kind != Tok::End) fail(current_, "unexpected text after the closing ')'");
    return call;
  }

 private:
  [[noreturn]] void fail(const Token& at, const std::string& rule) const {
    throw SpecError(spec_, at.position, at.text, rule);
  }

  void expect(Tok kind, const std::string& context) {
    if (current_.kind != kind)
      fail(current_, std::string("expected ") + describe(kind) + " " + context + ", found " + describe(current_.kind));
    advance();
  }

  void advance() { current_ = lex(); }

  Token lex() {
    while (pos_ < spec_.size() && std::isspace(static_cast<unsigned char>(spec_[pos_]))) ++pos_;
    Token token;
    token.position = pos_;
    if (pos_ >= spec_.size()) return token;
    const char c = spec_[pos_];
    auto single = [&](Tok kind) {
      token.kind = kind;
      token.text = std::string(1, c);
      ++pos_;
      return token;
    };
    switch (c) {
      case '(': return single(Tok::Open);
      case ')': return single(Tok::Close);
      case '[': return single(Tok::OpenList);
      case ']': return single(Tok::CloseList);
      case ',': return single(Tok::Comma);
      case '=': return single(Tok::Equals);
      case '"': return lex_quoted();
      default: break;
    }
    token.kind = Tok::Word;
    while (pos_ < spec_.size() && !is_delimiter(spec_[pos_])) token.text += spec_[pos_++];
    return token;
  }

  Token lex_quoted() {
    Token token;
    token.kind = Tok::Quoted;
    token.position = pos_++;
    while (pos_ < spec_.size() && spec_[pos_] != '"') {
      if (spec_[pos_] == '\\' && pos_ + 1 < spec_.size()) ++pos_;
      token.text += spec_[pos_++];
    }
    if (pos_ >= spec_.size()) throw SpecError(spec_, token.position, "\"", "unterminated quoted string");
    ++pos_;
    return token;
  }

  SpecCall parse_call(const Token& name, int depth) {
    if (depth > kMaxDepth) fail(name, "specs nest at most " + std::to_string(kMaxDepth) + " levels deep");
    if (!is_identifier(name.text)) fail(name, "a schedule name is letters, digits and '_', starting with a letter");
    SpecCall call;
    call.name = name.text;
    call.position = name.position;
    expect(Tok::Open, "after the schedule name '" + name.text + "'");
    if (current_.kind == Tok::Close) {
      advance();
      return call;
    }
    for (;;) {
      call.args.push_back(parse_arg(depth));
      if (current_.kind == Tok::Comma) {
        advance();
        continue;
      }
      expect(Tok::Close, "to close " + name.text + "(");
      return call;
    }
  }

  SpecArg parse_arg(int depth) {
    SpecArg arg;
    if (current_.kind == Tok::Word) {
      const Token word = current_;
      advance();
      if (current_.kind == Tok::Equals) {
        if (!is_identifier(word.text)) fail(word, "a key is letters, digits and '_', starting with a letter");
        advance();
        arg.key = word.text;
        arg.key_position = word.position;
        arg.value = parse_value(depth);
        return arg;
      }
      arg.value = finish_word(word, depth);
      return arg;
    }
    arg.value = parse_value(depth);
    return arg;
  }

  SpecValue parse_value(int depth) {
    const Token token = current_;
    switch (token.kind) {
      case Tok::Word:
        advance();
        return finish_word(token, depth);
      case Tok::Quoted: {
        advance();
        SpecValue value;
        value.kind = SpecValue::Kind::Word;
        value.position = token.position;
        value.text = token.text;
        return value;
      }
      case Tok::OpenList: return parse_list(depth);
      default: fail(token, std::string("expected a value, found ") + describe(token.kind));
    }
  }

  SpecValue parse_list(int depth) {
    if (depth > kMaxDepth) fail(current_, "lists nest at most " + std::to_string(kMaxDepth) + " levels deep");
    SpecValue list;
    list.kind = SpecValue::Kind::List;
    list.position = current_.position;
    list.text = "[";
    advance();
    if (current_.kind == Tok::CloseList) {
      advance();
      return list;
    }
    for (;;) {
      list.items.push_back(parse_value(depth + 1));
      if (current_.kind == Tok::Comma) {
        advance();
        continue;
      }
      expect(Tok::CloseList, "to close the list opened at position " + std::to_string(list.position));
      return list;
    }
  }

  // A word already consumed: a nested call when '(' follows, else a number or word.
  SpecValue finish_word(const Token& word, int depth) {
    SpecValue value;
    value.position = word.position;
    value.text = word.text;
    if (current_.kind == Tok::Open) {
      value.kind = SpecValue::Kind::Call;
      value.call = std::make_shared<const SpecCall>(parse_call(word, depth + 1));
      return value;
    }
    const std::string& text = word.text;
    const bool percent = !text.empty() && text.back() == '%';
    const char* first = text.data();
    const char* last = text.data() + text.size() - (percent ? 1 : 0);
    double number = 0.0;
    const auto [end, ec] = chars_to_double(first, last, number);
    if (end == last && first != last) {
      if (ec == std::errc::result_out_of_range) fail(word, "number out of range");
      if (!std::isfinite(number)) fail(word, "numbers must be finite");
      value.kind = SpecValue::Kind::Number;
      value.number = number;
      value.percent = percent;
      return value;
    }
    if (percent) fail(word, "'%' must follow a number");
    value.kind = SpecValue::Kind::Word;
    return value;
  }

  const std::string& spec_;
  size_t pos_ = 0;
  Token current_;
};

}  // namespace

SpecCall parse_spec(const std::string& spec) { return Parser(spec).parse_root(); }

std::string format_word(const std::string& word) {
  bool needs_quotes = word.empty() || word.back() == '%';
  for (char c : word) needs_quotes = needs_quotes || is_delimiter(c) || c == '\\';
  double number = 0.0;
  const auto [end, ec] = chars_to_double(word.data(), word.data() + word.size(), number);
  needs_quotes = needs_quotes || (end == word.data() + word.size() && !word.empty());
  if (!needs_quotes) return word;
  std::string quoted = "\"";
  for (char c : word) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace lrkit::schedules
