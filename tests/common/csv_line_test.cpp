// Splitting CSV / TSV lines as RFC 4180 writes them, and quoting file text in messages (lrkit/common/csv_line.hpp).
#include "lrkit/common/csv_line.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace lrkit {
namespace {

using Fields = std::vector<std::string>;

TEST(CsvLine, PlainFieldsAreTrimmedAndEmptyOnesKept) {
  EXPECT_EQ(split_csv_line("step, loss ,grad_norm\r", ','), (Fields{"step", "loss", "grad_norm"}));
  EXPECT_EQ(split_csv_line("1,,3,", ','), (Fields{"1", "", "3", ""}));
  EXPECT_EQ(split_csv_line("", ','), (Fields{""}));
  EXPECT_EQ(split_csv_line("5\t 0.5 \t", '\t'), (Fields{"5", "0.5", ""})) << "a tab separates in TSV, a space is trimmed";
}

TEST(CsvLine, QuotedFieldsHoldSeparatorsAndDoubledQuotes) {
  // The header of a Weights & Biases export, and R's write.csv.
  EXPECT_EQ(split_csv_line("\"Step\",\"run-1 - train/loss\",\"run-1 - train/loss__MIN\"", ','),
            (Fields{"Step", "run-1 - train/loss", "run-1 - train/loss__MIN"}));
  EXPECT_EQ(split_csv_line(" \"a, b\" ,\"say \"\"hi\"\"\",\"\"", ','), (Fields{"a, b", "say \"hi\"", ""}));
  EXPECT_EQ(split_csv_line("\"1\"\t\"x\ty\"", '\t'), (Fields{"1", "x\ty"}));
}

TEST(CsvLine, AnOpenQuoteOrTextAfterAClosingOneIsAnError) {
  try {
    split_csv_line("0,\"1e-3", ',');
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the quote at character 3 is not closed on its line");
  }
  try {
    split_csv_line("\"ab\"c,1", ',');
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "text after the closing quote at character 4 (a quote inside a quoted field is written \"\")");
  }
}

}  // namespace
}  // namespace lrkit
