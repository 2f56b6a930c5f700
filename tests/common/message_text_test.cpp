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
