// A configuration value that is one of a few names (optim.name = adamw|sgd):
// parsed into its enum when set, so the loop compares enums, never strings.
// An unknown name is kept with its text and refused by validation, naming the
// key, the alternatives and the text. ChoiceNames<E> lists each enum's names.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace lrkit::train {

// Specialize with `static constexpr std::pair<E, const char*> values[] = {...};`.
template <class E>
struct ChoiceNames;

template <class E>
class Choice {
 public:
  Choice(E value) : value_(value), text_(name(value)), valid_(true) {}  // NOLINT: implicit by design
  Choice(const std::string& text) : text_(text) {                      // NOLINT: "adamw" reads as a choice
    for (const auto& [value, name] : ChoiceNames<E>::values)
      if (text == name) {
        value_ = value;
        valid_ = true;
      }
  }
  Choice(const char* text) : Choice(std::string(text)) {}  // NOLINT

  bool operator==(E other) const { return valid_ && value_ == other; }
  bool operator!=(E other) const { return !(*this == other); }
  bool operator==(const Choice& other) const { return text_ == other.text_; }
  bool valid() const { return valid_; }
  const std::string& text() const { return text_; }
  E value() const {
    if (!valid_) throw std::logic_error("unvalidated choice '" + text_ + "'");
    return value_;
  }

  static std::string name(E value) {
    for (const auto& [v, name] : ChoiceNames<E>::values)
      if (v == value) return name;
    throw std::logic_error("a choice without a name");
  }
  // "a, b or c"
  static std::string alternatives() {
    std::string out;
    const size_t n = std::size(ChoiceNames<E>::values);
    for (size_t i = 0; i < n; ++i)
      out += std::string(i == 0 ? "" : i + 1 == n ? " or " : ", ") + ChoiceNames<E>::values[i].second;
    return out;
  }

 private:
  E value_{};
  std::string text_;
  bool valid_ = false;
};

}  // namespace lrkit::train
