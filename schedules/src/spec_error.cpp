#include "lrkit/schedules/spec_error.hpp"

#include <algorithm>

#include "lrkit/common/message_text.hpp"

namespace lrkit::schedules {

namespace {

// Specs up to this length are quoted whole; a longer one (generated, or a file pasted by mistake) is quoted
// around the error only, so that the message stays one readable line.
constexpr size_t kWholeSpecLength = 160;
constexpr size_t kContextBefore = 60;
constexpr size_t kContextLength = 120;

std::string quoted_spec(const std::string& spec, size_t position) {
  if (spec.size() <= kWholeSpecLength) return "\"" + text_for_message(spec, kWholeSpecLength) + "\"";
  const size_t from = std::min(position > kContextBefore ? position - kContextBefore : 0, spec.size() - kContextLength);
  const size_t to = from + kContextLength;
  const auto characters = [&](size_t end) { return characters_before(spec, end); };  // as the message counts them
  return "of " + std::to_string(characters(spec.size())) + " characters \"" + (from > 0 ? "..." : "") +
         text_for_message(std::string_view(spec).substr(from, kContextLength), kContextLength) +
         (to < spec.size() ? "..." : "") + "\" (characters " + std::to_string(characters(from)) + " to " +
         std::to_string(characters(to) - 1) + ")";
}

std::string compose(const std::string& spec, size_t position, const std::string& token,
                    const std::string& rule) {
  // The position in characters, as the quoted spec shows it ("café" before it is 4 of them, 5 bytes).
  std::string text = "invalid schedule spec " + quoted_spec(spec, position) + " at position " +
                     std::to_string(characters_before(spec, position));
  if (!token.empty()) text += " ('" + text_for_message(token) + "')";
  return text + ": " + rule;
}

}  // namespace

SpecError::SpecError(const std::string& spec, size_t position, const std::string& token,
                     const std::string& rule)
    : std::invalid_argument(compose(spec, position, token, rule)),
      spec_(spec),
      position_(position),
      token_(token),
      rule_(rule) {}

}  // namespace lrkit::schedules
