// Text quoted in error messages (message_text.hpp).
#include "lrkit/common/message_text.hpp"

#include <gtest/gtest.h>

namespace lrkit {
namespace {

TEST(MessageText, EscapesControlCharactersAndBytesThatAreNoUtf8AndIsCut) {
  EXPECT_EQ(text_for_message("loss"), "loss");
  EXPECT_EQ(text_for_message(std::string("a\x1b[2Jb\0c", 8)), "a\\x1b[2Jb\\x00c");
  EXPECT_EQ(text_for_message(std::string(100, 'x'), 5), "xxxxx...");
  EXPECT_EQ(text_for_message("caf\xc3\xa9"), "caf\xc3\xa9") << "UTF-8 is text";
  EXPECT_EQ(text_for_message("\xe2\x82\xac \xf0\x9f\x99\x82"), "\xe2\x82\xac \xf0\x9f\x99\x82") << "three and four bytes";
  // A binary file's bytes that are no UTF-8 printed raw made the terminal show replacement marks or worse.
  EXPECT_EQ(text_for_message("a\xff\xfe" "b"), "a\\xff\\xfeb");
  EXPECT_EQ(text_for_message("caf\xc3"), "caf\\xc3") << "a sequence cut by the end of the text";
  EXPECT_EQ(text_for_message("\xc3(x"), "\\xc3(x") << "a lead byte without its continuation";
  EXPECT_EQ(text_for_message("caf\xc3\xa9s", 4), "caf...") << "the limit does not cut a character in two";
}

// What no strict decoder (Python's among them) reads as UTF-8 is escaped too: an overlong form, an encoded
// surrogate, a code point past U+10FFFF.
TEST(MessageText, EscapesTheFormsThatAreNoUtf8ThoughTheyLookLikeIt) {
  EXPECT_EQ(text_for_message("\xe0\x80\xaf"), "\\xe0\\x80\\xaf") << "an overlong '/'";
  EXPECT_EQ(text_for_message("\xed\xa0\x80"), "\\xed\\xa0\\x80") << "the surrogate U+D800";
  EXPECT_EQ(text_for_message("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80") << "U+110000";
  EXPECT_EQ(text_for_message("\xed\x9f\xbf \xf4\x8f\xbf\xbf"), "\xed\x9f\xbf \xf4\x8f\xbf\xbf") << "U+D7FF, U+10FFFF";
}

// An error's position as the reader counts it on the screen, and as Python indexes the str of those bytes.
TEST(MessageText, CharactersBeforeCountsAUtf8SequenceOnceAndEachOtherByteOnce) {
  EXPECT_EQ(characters_before("abc", 2), 2u);
  EXPECT_EQ(characters_before("caf\xc3\xa9!", 5), 4u) << "after a two-byte \u00e9";
  EXPECT_EQ(characters_before("caf\xe9!", 4), 4u) << "a Latin-1 byte: one surrogate to Python";
  EXPECT_EQ(characters_before("\xe2\x82" "A", 2), 2u) << "a cut sequence: one per byte";
  EXPECT_EQ(characters_before("\xf0\x9f\x99\x82x", 4), 1u);
  EXPECT_EQ(characters_before("ab", 10), 2u) << "an end past the text";
}

TEST(ListForMessage, NamesTheFirstItemsThenCountsTheRest) {
  EXPECT_EQ(list_for_message({}), "");
  EXPECT_EQ(list_for_message({"1"}), "1");
  EXPECT_EQ(list_for_message({"1", "3"}), "1, 3");
  EXPECT_EQ(list_for_message({"a", "b", "c", "d"}, 2), "a, b and 2 more");
  EXPECT_EQ(list_for_message({"a", "b"}, 2), "a, b");
}

TEST(RanksForMessage, OneRankOrSeveral) {
  EXPECT_EQ(ranks_for_message({"3"}), "rank 3");
  EXPECT_EQ(ranks_for_message({"1", "3"}), "ranks 1, 3");
  EXPECT_EQ(ranks_for_message(std::vector<std::string>(20, "7")).substr(0, 10), "ranks 7, 7");
}

}  // namespace
}  // namespace lrkit
