// Lines of INI files as boost::program_options reads them (ini_lines.hpp), for errors that name the line.
#include "lrkit/common/ini_lines.hpp"

#include <gtest/gtest.h>

#include "lrkit/common/closest_name.hpp"

namespace lrkit {
namespace {

const std::string kFile =
    "# a comment = not a key\n"   // 1
    "top = 1\n"                   // 2
    "[train]\n"                   // 3
    "  steps = 7   # seven\n"     // 4
    "\n"                          // 5
    "[optim]\r\n"                 // 6: a Windows line end
    "beta1=0.9\n"                 // 7
    "train.steps = 8\n"           // 8: optim.train.steps, not train.steps
    "[sched.]\n"                  // 9: a section that ends in a dot gets no second one
    "spec = cosine()\n"           // 10
    "[optim]\n"                   // 11
    "beta1 = 0.8\n"               // 12
    "junk line   # with a comment\n";  // 13

TEST(IniLines, KeysAreFoundUnderTheirSectionAndByOccurrence) {
  EXPECT_EQ(ini_line_of_key(kFile, "top"), 2u);
  EXPECT_EQ(ini_line_of_key(kFile, "train.steps"), 4u);
  EXPECT_EQ(ini_line_of_key(kFile, "train.steps", 2), std::nullopt);
  EXPECT_EQ(ini_line_of_key(kFile, "optim.train.steps"), 8u);
  EXPECT_EQ(ini_line_of_key(kFile, "optim.beta1"), 7u);
  EXPECT_EQ(ini_line_of_key(kFile, "optim.beta1", 2), 12u);
  EXPECT_EQ(ini_line_of_key(kFile, "sched.spec"), 10u);
  EXPECT_EQ(ini_line_of_key(kFile, "a comment"), std::nullopt) << "a comment sets nothing";
}

TEST(IniLines, ALineIsFoundAsBoostQuotesIt) {
  EXPECT_EQ(ini_line_of_text(kFile, "junk line"), 13u);
  EXPECT_EQ(ini_line_of_text(kFile, "[optim]"), 6u);
  EXPECT_EQ(ini_line_of_text(kFile, "nowhere"), std::nullopt);
  EXPECT_EQ(ini_place("f.cfg", 3), "'f.cfg' line 3");
  EXPECT_EQ(ini_place("f.cfg", std::nullopt), "'f.cfg'");
}

TEST(IniLines, TheKeysAMessageNamesAsWholeWordsAreFoundOnTheirLines) {
  const std::vector<std::string> keys = {"train.steps", "optim.beta1", "sched.spec", "top"};
  EXPECT_EQ(ini_lines_of_keys_named(kFile, "optim.beta1 (0.9) must be below train.steps (7)", keys), (std::vector<size_t>{4, 7}));
  EXPECT_EQ(ini_lines_of_keys_named(kFile, "it needs train.steps.", keys), (std::vector<size_t>{4})) << "a full stop ends a word";
  EXPECT_EQ(ini_lines_of_keys_named(kFile, "sched.spec: bad; top=3", keys), (std::vector<size_t>{10, 2}));
  for (const char* unnamed : {"train.steps_max is 3", "xtrain.steps", "optim.train.steps", "stop", "optim.beta12"})
    EXPECT_EQ(ini_lines_of_keys_named(kFile, unnamed, keys), std::vector<size_t>{}) << unnamed;
  EXPECT_EQ(ini_lines_of_keys_named(kFile, "optim.beta2 is off", {"optim.beta2"}), std::vector<size_t>{}) << "a key the file does not set";
}

TEST(IniLines, SeveralLinesAreNamedInOrderOnce) {
  EXPECT_EQ(ini_place("f.cfg", std::vector<size_t>{}), "'f.cfg'");
  EXPECT_EQ(ini_place("f.cfg", std::vector<size_t>{4}), "'f.cfg' line 4");
  EXPECT_EQ(ini_place("f.cfg", std::vector<size_t>{9, 4}), "'f.cfg' lines 4 and 9");
  EXPECT_EQ(ini_place("f.cfg", std::vector<size_t>{9, 4, 7, 4}), "'f.cfg' lines 4, 7 and 9");
}

// Python's configparser comments with ';' at a line's start, which Boost refuses: those lines are blanked for the
// parser (line numbers stay) and set nothing; a ';' inside a value is the value's.
TEST(IniLines, SemicolonCommentLinesAreBlankedAndSetNothing) {
  const std::string text = "; steps = 1\n[train]\n  ;steps = 2\nsteps = 3 ; three\n\t; last\n";
  EXPECT_EQ(ini_text_for_parsing(text), "\n[train]\n\nsteps = 3 ; three\n\n");
  EXPECT_EQ(ini_line_of_key(text, "steps"), std::nullopt);
  EXPECT_EQ(ini_line_of_key(text, "train.steps"), 4u);
  EXPECT_EQ(ini_line_of_key(text, "train.steps", 2), std::nullopt);
  EXPECT_EQ(ini_line_of_text(text, "; last"), std::nullopt);
}

TEST(IniLines, AnUnknownKeyIsAnsweredAsAFileWritesIt) {
  const std::vector<std::string> keys = {"train.steps", "optim.weight_decay", "top"};
  EXPECT_EQ(ini_did_you_mean("optim.weight_dacay", keys), "; did you mean 'weight_decay' in [optim]?");
  EXPECT_EQ(ini_did_you_mean("steps", keys), "; did you mean 'steps' in [train]?");
  EXPECT_EQ(ini_did_you_mean("tpo", keys), "; did you mean 'top'?");
  EXPECT_EQ(ini_did_you_mean("zzzzzz", keys), "");
  EXPECT_EQ(ini_did_you_mean("train.Steps", keys), "; did you mean 'steps' in [train]?");
}

}  // namespace
}  // namespace lrkit
