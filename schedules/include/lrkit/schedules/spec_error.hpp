// The one error type for invalid schedule specs and parameters: it names the
// spec, the position (position(): a 0-based byte offset into spec(); the message
// counts characters), the offending token and the rule that was broken, in a single line.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

namespace lrkit::schedules {

class SpecError : public std::invalid_argument {
 public:
  SpecError(const std::string& spec, size_t position, const std::string& token, const std::string& rule);

  const std::string& spec() const { return spec_; }
  size_t position() const { return position_; }
  const std::string& token() const { return token_; }
  const std::string& rule() const { return rule_; }

 private:
  std::string spec_;
  size_t position_;
  std::string token_;
  std::string rule_;
};

}  // namespace lrkit::schedules
