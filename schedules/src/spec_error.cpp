#include "lrkit/schedules/spec_error.hpp"

namespace lrkit::schedules {

namespace {
std::string compose(const std::string& spec, size_t position, const std::string& token,
                    const std::string& rule) {
  std::string text = "invalid schedule spec \"" + spec + "\" at position " + std::to_string(position);
  if (!token.empty()) text += " ('" + token + "')";
  return text + ": " + rule;
}
}  // namespace

SpecError::SpecError(const std::string& spec, size_t position, const std::string& token,
                     const std::string& rule)
    : std::invalid_argument(compose(spec, position, token, rule)),
      position_(position),
      token_(token),
      rule_(rule) {}

}  // namespace lrkit::schedules
