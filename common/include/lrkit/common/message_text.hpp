// Text from a file or the command line as an error message quotes it: cut to a length and escaped where it
// is no printable UTF-8, so that a binary file or a pasted blob given by mistake neither garbles the terminal
// nor buries the message.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace lrkit {

// The length of the UTF-8 sequence starting at text[i] (1 to 4), or 0 where the bytes there are no valid one.
inline size_t utf8_sequence_length(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  const size_t n = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0 || i + n > text.size()) return 0;
  for (size_t k = 1; k < n; ++k)
    if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return 0;
  // Where the second byte's range is narrower: no overlong form, no surrogate, nothing past U+10FFFF (as Python and
  // every strict decoder read UTF-8).
  const auto second = n > 1 ? static_cast<unsigned char>(text[i + 1]) : 0;
  if ((c == 0xe0 && second < 0xa0) || (c == 0xed && second > 0x9f) || (c == 0xf0 && second < 0x90) ||
      (c == 0xf4 && second > 0x8f))
    return 0;
  return n;
}

// The characters in text[0, end): a UTF-8 sequence is one, and so is each byte that is no UTF-8 (as Python reads a
// file name's bytes, one surrogate each). An error's position in these is where a reader finds it on the screen.
inline size_t characters_before(std::string_view text, size_t end) {
  size_t characters = 0;
  for (size_t i = 0; i < end && i < text.size(); ++characters) i += std::max<size_t>(utf8_sequence_length(text, i), 1);
  return characters;
}

// A file's text as an error message quotes it: at most `limit` bytes (then "..."), control characters and bytes
// that are no UTF-8 as \xNN, so that a binary file given by mistake cannot garble the terminal.
inline std::string text_for_message(std::string_view text, size_t limit = 80) {
  static const char* const kHex = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  while (i < text.size() && i < limit) {
    const auto c = static_cast<unsigned char>(text[i]);
    const size_t n = utf8_sequence_length(text, i);
    if (n > 1 && i + n <= limit) {
      out.append(text.substr(i, n));
      i += n;
      continue;
    }
    if (n == 1 && c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else if (n > 1) {
      break;  // a character cut by the limit
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
    ++i;
  }
  return i < text.size() ? out + "..." : out;
}

// "a, b, c" for the first `limit` items, then " and N more": a list of 256 ranks stays one readable line.
inline std::string list_for_message(const std::vector<std::string>& items, size_t limit = 16) {
  std::string out;
  for (size_t i = 0; i < items.size() && i < limit; ++i) out += (i == 0 ? "" : ", ") + items[i];
  if (items.size() > limit) out += " and " + std::to_string(items.size() - limit) + " more";
  return out;
}

// "rank 3" or "ranks 1, 3" (list_for_message's list): the ranks a refusal names.
inline std::string ranks_for_message(const std::vector<std::string>& ranks) {
  return (ranks.size() == 1 ? "rank " : "ranks ") + list_for_message(ranks);
}

}  // namespace lrkit
