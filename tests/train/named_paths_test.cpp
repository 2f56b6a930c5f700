// The NAME=PATH lists of the configuration (named_paths.hpp): commas inside quoted paths, escapes, and the errors.
#include "lrkit/train/named_paths.hpp"

#include <gtest/gtest.h>

#include "lrkit/train/train_config.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

std::vector<std::string> paths(const std::string& list) {
  std::vector<std::string> out;
  for (const auto& entry : named_paths("data.sources", list)) out.push_back(entry.name + "|" + entry.path.value_or("(none)"));
  return out;
}

std::string error_of(const std::string& list) {
  try {
    named_paths("eval.sets", list);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(taken)";
}

TEST(NamedPaths, CommasSplitEntriesOutsideQuotesOnly) {
  EXPECT_EQ(paths("a=x.txt, b = y.txt ,c=z"), (std::vector<std::string>{"a|x.txt", "b|y.txt", "c|z"}));
  EXPECT_EQ(paths("a=\"runs/1, 2/x.txt\", b=y"), (std::vector<std::string>{"a|runs/1, 2/x.txt", "b|y"}));
  EXPECT_EQ(paths("a=\" edge spaces \""), (std::vector<std::string>{"a| edge spaces "}));
  EXPECT_EQ(paths(R"(a="say \"hi\", \\o/")"), (std::vector<std::string>{R"(a|say "hi", \o/)"}));
  EXPECT_EQ(paths(R"(a=C:\data\x.txt)"), (std::vector<std::string>{R"(a|C:\data\x.txt)"})) << "unquoted: as written";
  EXPECT_EQ(paths(R"(a="C:\data, 2\x.txt")"), (std::vector<std::string>{R"(a|C:\data, 2\x.txt)"}))
      << "quoted: a backslash before neither \" nor \\ is the path's own";
  EXPECT_EQ(paths("heldout, a=x,"), (std::vector<std::string>{"heldout|(none)", "a|x"})) << "a trailing comma ends it";
  EXPECT_EQ(paths(""), std::vector<std::string>{});
  EXPECT_EQ(paths("a=x,,b=y"), (std::vector<std::string>{"a|x", "|(none)", "b|y"})) << "an empty entry is the caller's to refuse";
  EXPECT_EQ(named_paths("data.sources", "a=\"1,2\"")[0].text, "a=\"1,2\"") << "messages quote the entry as written";
}

TEST(NamedPaths, BadQuotingIsNamedWithTheKeyAndEntry) {
  EXPECT_EQ(error_of("a=x, b=\"y, c=z"), "eval.sets: the quote at character 8 is never closed ('a=x, b=\"y, c=z')");
  EXPECT_EQ(error_of(R"(a="x\")"), R"(eval.sets: the quote at character 3 is never closed ('a="x\"'))");
  EXPECT_EQ(error_of("a=x, b=\"y\"z"), "eval.sets entry 2 ('b=\"y\"z'): text after the quoted path ('z'); a comma separates entries");
  EXPECT_EQ(error_of("a=my\"file\""),
            "eval.sets entry 1 ('a=my\"file\"'): a '\"' inside a path; write the whole path in double quotes, with \\\" for each '\"' in it");
}

TEST(NamedPaths, ACorpusWhosePathHoldsACommaIsASourceAndAnEvalSet) {
  TrainConfig c = tiny_config();
  std::string text;
  for (int i = 0; i < 400; ++i) text += "And the evening and the morning were day " + std::to_string(i % 7) + ".\n";
  const std::string odd = lrkit::testing::write_text("run (2), copy.txt", text);
  c.data.sources = "one=\"" + odd + "\", two=" + c.data.path;
  c.eval.sets = "heldout, again=\"" + odd + "\"";
  ASSERT_EQ(c.data_sources().size(), 2u);
  EXPECT_EQ(c.data_sources()[0].path, odd);
  EXPECT_EQ(c.eval_sets().back().path, odd);
  EXPECT_NO_THROW(c.check_data_files());
  c.data.sources = "one=" + odd;  // unquoted, the comma splits it: the second half is no NAME=PATH
  try {
    c.data_sources();
    ADD_FAILURE() << "taken";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("data.sources entry 2 ('copy.txt') must be NAME=PATH"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lrkit::train
