// Reading per-rank logs as text: CSV and JSON lines, a row per step and rank, a column per rank or a file per rank,
// the loss alone, mapped names, and every way they can be wrong.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "lrkit/diagnostics/rank_log.hpp"
#include "rank_log_refusal.hpp"
#include "test_files.hpp"

namespace lrkit::diagnostics {
namespace {

using lrkit::testing::write_text;

TEST(RankLog, CsvAndJsonLinesGiveTheSameGrid) {
  const auto csv = write_text("ranks.csv", "rank,step,loss,grad_norm,cos_to_mean\n"
                                           "1,0,2.5,1.5,0.9\n0,0,2.4,1.4,0.8\n0,1,2.3,1.3,0.7\n1,1,2.2,1.2,0.6\n");
  const auto jsonl = write_text("ranks.jsonl",
                                "{\"step\": 0, \"rank\": 0, \"loss\": 2.4, \"grad_norm\": 1.4, \"cos_to_mean\": 0.8}\n"
                                "{\"step\": 0, \"rank\": 1, \"loss\": 2.5, \"grad_norm\": 1.5, \"cos_to_mean\": 0.9}\n\n"
                                "{\"step\": 1, \"rank\": 1, \"loss\": 2.2, \"grad_norm\": 1.2, \"cos_to_mean\": 0.6}\n"
                                "{\"step\": 1, \"rank\": 0, \"loss\": 2.3, \"grad_norm\": 1.3, \"cos_to_mean\": 0.7}\n");
  for (const auto& path : {csv, jsonl}) {
    const auto log = read_rank_log(path);
    EXPECT_EQ(log.ranks, 2);
    EXPECT_EQ(log.steps, (std::vector<double>{0, 1}));
    EXPECT_EQ(log.loss, (std::vector<double>{2.4, 2.5, 2.3, 2.2})) << path;
    EXPECT_EQ(log.grad_norm, (std::vector<double>{1.4, 1.5, 1.3, 1.2}));
    EXPECT_EQ(log.cos_to_mean, (std::vector<double>{0.8, 0.9, 0.7, 0.6}));
  }
  const auto no_cos = read_rank_log(write_text("nocos.csv", "step,rank,loss,grad_norm\n0,0,1,1\n"));
  EXPECT_TRUE(no_cos.cos_to_mean.empty());
}

// pandas' to_csv(encoding="utf-8-sig") and spreadsheets start a CSV with a byte-order mark.
TEST(RankLog, AByteOrderMarkBeforeTheCsvHeaderIsSkipped) {
  const auto log = read_rank_log(write_text("bom_ranks.csv", "\xEF\xBB\xBFstep,rank,loss,grad_norm\n0,0,2.4,1.4\n0,1,2.5,1.5\n"));
  EXPECT_EQ(log.steps, (std::vector<double>{0}));
  EXPECT_EQ(log.loss, (std::vector<double>{2.4, 2.5}));
}

// R's write.csv and Weights & Biases exports quote every name (and any field with a comma): the quoted header
// was reported as having no column 'step'.
TEST(RankLog, QuotedCsvFieldsAreRead) {
  const auto log = read_rank_log(write_text("quoted_ranks.csv", "\"step\",\"rank\",\"loss\",\"grad_norm\",\"note, free text\"\n"
                                                                "0,0,\"2.4\",1.4,\"a, b\"\n0,1,2.5,1.5,\"\"\"quoted\"\"\"\n"));
  EXPECT_EQ(log.loss, (std::vector<double>{2.4, 2.5}));
  EXPECT_NE(error_of(write_text("open_quote.csv", "step,rank,loss,grad_norm\n0,0,\"2.4,1.4\n0,1,2.5,1.5\n")).find(
                "open_quote.csv (CSV) line 2: the quote at character 5 is not closed on its line"),
            std::string::npos);
}

TEST(RankLog, AJsonLineThatIsNoObjectAndBinaryTextAreNamedReadably) {
  EXPECT_NE(error_of(write_text("array.jsonl", "[{\"step\": 0}]\n{\"step\": 1}\n"))
                .find("array.jsonl (JSON lines) line 1: not a JSON object (a line must be one {...}; it starts with '[')"),
            std::string::npos);
  const auto binary = error_of(write_text("binary.csv", std::string("\x1b[2J\x01\x02,x\n1,2\n")));
  EXPECT_NE(binary.find("(have: \\x1b[2J\\x01\\x02,x;"), std::string::npos) << binary;
}

TEST(RankLog, JsonLinesTakePythonsNonFiniteNumbersAndNull) {
  // What Python's json.dumps writes for a diverged worker (lrkit.torch.DispersionHook's log), and null.
  const auto log = read_rank_log(write_text(
      "diverged.jsonl",
      "{\"step\": 0, \"rank\": 0, \"loss\": 2.0, \"grad_norm\": 1.0, \"cos_to_mean\": 0.5, \"note\": \"NaN, \\\"Infinity\"}\n"
      "{\"step\": 0, \"rank\": 1, \"loss\": NaN, \"grad_norm\": Infinity, \"cos_to_mean\": -Infinity}\n"
      "{\"step\": 1, \"rank\": 0, \"loss\":NaN,\"grad_norm\":null,\"cos_to_mean\":NaN}\n"
      "{\"step\": 1, \"rank\": 1, \"loss\": 1.5, \"grad_norm\": 2.0, \"cos_to_mean\": 0.25}\n"));
  ASSERT_EQ(log.steps, (std::vector<double>{0, 1}));
  EXPECT_EQ(log.loss[0], 2.0);
  EXPECT_TRUE(std::isnan(log.loss[1]) && std::isnan(log.loss[2]));
  EXPECT_EQ(log.grad_norm[1], INFINITY);
  EXPECT_TRUE(std::isnan(log.grad_norm[2])) << "null reads as NaN";
  ASSERT_EQ(log.cos_to_mean.size(), 4u);
  EXPECT_EQ(log.cos_to_mean[0], 0.5);
  EXPECT_EQ(log.cos_to_mean[1], -INFINITY);
  EXPECT_TRUE(std::isnan(log.cos_to_mean[2]));
  EXPECT_EQ(log.cos_to_mean[3], 0.25);
}

TEST(RankLog, TheRowAKillCutOffAtTheEndIsLeftOutWithAWarning) {
  const std::string head = "step,rank,loss,grad_norm\n0,0,1,1\n0,1,2,2\n1,0,3,3\n1,1,4,4\n";
  const std::string json = "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1}\n"
                           "{\"step\": 0, \"rank\": 1, \"loss\": 2, \"grad_norm\": 2}\n"
                           "{\"step\": 1, \"rank\": 0, \"loss\": 3, \"grad_norm\": 3}\n"
                           "{\"step\": 1, \"rank\": 1, \"loss\": 4, \"grad_norm\": 4}\n";
  for (const auto& [name, text, line] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"torn.csv", head + "2,0,5", "line 6"}, {"torn.jsonl", json + "{\"step\": 2, \"rank\": 0, \"lo", "line 5"}}) {
    const auto log = read_rank_log(write_text(name, text));
    EXPECT_EQ(log.steps, (std::vector<double>{0, 1})) << name;
    EXPECT_EQ(log.loss, (std::vector<double>{1, 2, 3, 4})) << name;
    ASSERT_EQ(log.warnings.size(), 1u) << name;
    EXPECT_NE(log.warnings[0].find(line), std::string::npos) << log.warnings[0];
    EXPECT_NE(log.warnings[0].find("without its line end: a row cut off by a kill, left out"), std::string::npos)
        << log.warnings[0];
  }
  // A whole last row without its line end (a hand-written file) is kept.
  const auto kept = read_rank_log(write_text("no_final_newline.csv", head + "2,0,5,5\n2,1,6,6"));
  EXPECT_EQ(kept.steps, (std::vector<double>{0, 1, 2}));
  EXPECT_TRUE(kept.warnings.empty());
}

TEST(RankLog, AStepMissingARanksRowIsSkippedWithAWarning) {
  const auto log = read_rank_log(write_text("gap.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,1,2,2\n1,1,3,3\n2,0,4,4\n2,1,5,5\n"));
  EXPECT_EQ(log.steps, (std::vector<double>{0, 2}));
  EXPECT_EQ(log.loss, (std::vector<double>{1, 2, 4, 5}));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("skipped 1 step(s) missing a rank's row: step 1 (no row for rank 0)"), std::string::npos)
      << log.warnings[0];
}

TEST(RankLog, ManyStepsMissingARanksRowAreCountedAndTheFirstFiveNamed) {
  std::string text = "step,rank,loss,grad_norm\n";
  for (int step = 0; step < 10; ++step) {
    text += std::to_string(step) + ",1,1,1\n";
    if (step % 5 == 0) text += std::to_string(step) + ",0,1,1\n";  // steps 0 and 5 whole; 8 others lack rank 0
  }
  const auto log = read_rank_log(write_text("gaps.csv", text));
  EXPECT_EQ(log.steps, (std::vector<double>{0, 5}));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("skipped 8 step(s) missing a rank's row: step 1 (no row for rank 0), step 2 (no row for "
                                 "rank 0), step 3 (no row for rank 0), step 4 (no row for rank 0), step 6 (no row for "
                                 "rank 0), ..."),
            std::string::npos)
      << log.warnings[0];
}

// Rows come in any order; a pair given twice is named at the row that first repeats one, in the file's order.
TEST(RankLog, RowsInAnyOrderAreGriddedAndTheFirstRepeatIsNamed) {
  const auto log = read_rank_log(write_text("shuffled.csv", "step,rank,loss,grad_norm\n2,1,6,6\n0,1,2,2\n2,0,5,5\n"
                                                            "1,1,4,4\n0,0,1,1\n1,0,3,3\n"));
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2}));
  EXPECT_EQ(log.loss, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_NE(error_of(write_text("repeats.csv", "step,rank,loss,grad_norm\n0,0,1,1\n1,0,1,1\n1,0,2,2\n0,0,2,2\n"))
                .find("repeats.csv (CSV) line 4: step 1 rank 0 appears twice"),
            std::string::npos);
}

// Where a JSON line stops being JSON, and a field that holds an object where a number belongs (before: "'' is not a
// number").
TEST(RankLog, AJsonLinesErrorSaysWhereAndANestedValueIsQuoted) {
  const auto cut = error_of(write_text("cut.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1.e5, \"grad_norm\": 1}\n"));
  EXPECT_NE(cut.find("cut.jsonl (JSON lines) line 1: not a JSON object (expected a digit after a number's '.' at "
                     "character 34; truncated file?)"),
            std::string::npos)
      << cut;
  const auto nested = error_of(write_text("nested.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": {\"mean\": 2}, \"grad_norm\": 1}\n"));
  EXPECT_NE(nested.find("nested.jsonl (JSON lines) line 1 field loss: '{\"mean\": 2}' is not a number"), std::string::npos)
      << nested;
  // A quoted number reads as the number, as it did; an escaped name is found by its decoded text.
  const auto quoted = read_rank_log(write_text("quoted.jsonl", "{\"step\": \"3\", \"rank\": 0, \"lo\\u0073s\": \"2.5\", "
                                                               "\"grad_norm\": \" 1.5 \"}\n"));
  EXPECT_EQ(quoted.steps, (std::vector<double>{3}));
  EXPECT_EQ(quoted.loss, (std::vector<double>{2.5}));
  EXPECT_EQ(quoted.grad_norm, (std::vector<double>{1.5}));
}

// A table with a column per rank and field (pandas's frame, lrkit.read_log's frame("ranks") written out, a tracker's
// export of per-rank keys) reads as the same rows one per step and rank give.
TEST(RankLog, ATableWithAColumnPerRankReadsAsARowPerStepAndRank) {
  const auto long_table = read_rank_log(write_text("long.csv", "step,rank,loss,grad_norm,cos_to_mean\n"
                                                               "0,0,2.5,1.5,0.5\n0,1,2.25,1.25,0.75\n"
                                                               "1,0,2,1,0.25\n1,1,1.75,0.75,-0.5\n"));
  const auto wide_table = read_rank_log(write_text("wide.csv", ",step,loss_0,loss_1,grad_norm_0,grad_norm_1,cos_to_mean_0,"
                                                               "cos_to_mean_1\n0,0,2.5,2.25,1.5,1.25,0.5,0.75\n"
                                                               "1,1,2,1.75,1,0.75,0.25,-0.5\n"));
  const auto wide_lines = read_rank_log(write_text(
      "wide.jsonl", "{\"step\": 0, \"loss_0\": 2.5, \"loss_1\": 2.25, \"grad_norm_0\": 1.5, \"grad_norm_1\": 1.25, "
                    "\"cos_to_mean_0\": 0.5, \"cos_to_mean_1\": 0.75}\n"
                    "{\"step\": 1, \"loss_0\": 2, \"loss_1\": 1.75, \"grad_norm_0\": 1, \"grad_norm_1\": 0.75, "
                    "\"cos_to_mean_0\": 0.25, \"cos_to_mean_1\": -0.5}\n"));
  // A tracker's per-rank keys, mapped with "{rank}" where the rank's number stands.
  const auto tracked = read_rank_log(write_text("tracked.csv", "it,rank0/loss,rank1/loss,rank0/gn,rank1/gn,rank0/cos,rank1/cos\n"
                                                               "0,2.5,2.25,1.5,1.25,0.5,0.75\n1,2,1.75,1,0.75,0.25,-0.5\n"),
                                     ReadOptions{parse_column_mapping("step=it,loss=rank{rank}/loss,grad_norm=rank{rank}/gn,"
                                                                      "cos_to_mean=rank{rank}/cos")});
  for (const RankLog* log : {&wide_table, &wide_lines, &tracked}) {
    EXPECT_EQ(log->ranks, 2) << log->source;
    EXPECT_EQ(log->steps, long_table.steps) << log->source;
    EXPECT_EQ(log->loss, long_table.loss) << log->source;
    EXPECT_EQ(log->grad_norm, long_table.grad_norm) << log->source;
    EXPECT_EQ(log->cos_to_mean, long_table.cos_to_mean) << log->source;
    EXPECT_TRUE(log->warnings.empty()) << log->source;
  }
  // An empty cell is NaN, as pandas writes a diverged rank's NaN and reads it back: the report's NaN/Inf section then
  // names the rank (before, its steps were skipped as rows it lacked, and the verdict said "no NaN/Inf"). A row with
  // no rank's value (a tracker's step logged for other columns, or NaN everywhere) is left out with a warning.
  const auto gap = read_rank_log(write_text("gap_wide.csv", "step,loss_0,loss_1,grad_norm_0,grad_norm_1\n0,1,2,1,2\n1,3,,3,\n"
                                                            "2,5,,5,6\n3,,,,\n4,7,8,7,8\n"));
  EXPECT_EQ(gap.steps, (std::vector<double>{0, 1, 2, 4}));
  ASSERT_EQ(gap.loss.size(), 8u);
  EXPECT_TRUE(std::isnan(gap.loss[3]) && std::isnan(gap.grad_norm[3]) && std::isnan(gap.loss[5]));
  EXPECT_EQ(gap.grad_norm[5], 6);
  ASSERT_EQ(gap.warnings.size(), 1u);
  EXPECT_EQ(gap.warnings[0], gap.source + ": left out 1 step(s) whose row holds no rank's value (logged for other columns, "
                                          "or NaN on every rank): step 3");
  const auto long_gap = read_rank_log(write_text("gap_long.csv", "step,rank,loss,grad_norm,cos_to_mean\n0,0,1,1,1\n0,1,,,\n"));
  ASSERT_EQ(long_gap.loss.size(), 2u);
  EXPECT_TRUE(std::isnan(long_gap.loss[1]) && std::isnan(long_gap.grad_norm[1]) && std::isnan(long_gap.cos_to_mean[1]));
  // A cosine column with no value at all is one the writer left empty (pandas' frame of a log without cosines).
  const auto no_cos = read_rank_log(write_text("empty_cos.csv", "step,rank,loss,grad_norm,cos_to_mean\n0,0,1,1,\n0,1,2,2,\n"));
  EXPECT_EQ(no_cos.loss, (std::vector<double>{1, 2}));
  EXPECT_TRUE(no_cos.cos_to_mean.empty());
  // In JSON lines a row names the ranks it has, in any order; one it lacks, rank 0 too, has no row at that step (a
  // NaN is written, as NaN or null); a row naming no rank is left out with the warning above.
  const auto gap_lines = read_rank_log(write_text(
      "gap_wide.jsonl", "{\"step\": 0, \"loss_1\": 2, \"grad_norm_1\": 2, \"loss_0\": 1, \"grad_norm_0\": 1}\n"
                        "{\"step\": 1, \"loss_1\": 4, \"grad_norm_1\": 4}\n{\"step\": 3, \"eval\": 1}\n"
                        "{\"step\": 2, \"loss_0\": 5, \"grad_norm_0\": 5, \"loss_1\": 6, \"grad_norm_1\": 6}\n"));
  EXPECT_EQ(gap_lines.steps, (std::vector<double>{0, 2}));
  EXPECT_EQ(gap_lines.loss, (std::vector<double>{1, 2, 5, 6}));
  ASSERT_EQ(gap_lines.warnings.size(), 2u);
  EXPECT_NE(gap_lines.warnings[0].find("left out 1 step(s) whose row holds no rank's value"), std::string::npos);
  EXPECT_NE(gap_lines.warnings[1].find("step 1 (no row for rank 0)"), std::string::npos) << gap_lines.warnings[1];
}

TEST(RankLog, ATableWithAColumnPerRankNamesWhatItLacks) {
  const std::pair<std::string, std::string> cases[] = {
      {write_text("mixed.jsonl", "{\"step\": 0, \"loss_0\": 1, \"grad_norm_0\": 1}\n"
                                 "{\"step\": 1, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1}\n"),
       "mixed.jsonl (JSON lines) line 2: a field 'rank' in a file whose first row has a field per rank (loss_0, ...); a "
       "file holds one layout"},
      {write_text("no_norm.csv", "step,loss_0,loss_1,grad_norm_0\n0,1,2,1\n"),
       "no_norm.csv (CSV) header: no column 'grad_norm_1' (have: step,loss_0,loss_1,grad_norm_0; grad_norm is given "
       "for every rank or none)"},
      {write_text("one_cos.csv", "step,loss_0,loss_1,grad_norm_0,grad_norm_1,cos_to_mean_0\n0,1,2,1,2,0.5\n"),
       "no column 'cos_to_mean_1' (have: step,loss_0,loss_1,grad_norm_0,grad_norm_1,cos_to_mean_0; cos_to_mean is given "
       "for every rank or none)"},
      {write_text("rank_gap.csv", "step,loss_0,loss_2,grad_norm_0,grad_norm_2\n0,1,2,1,2\n"),
       "rank_gap.csv (CSV) header: no column 'loss_1' (have: step,loss_0,loss_2,grad_norm_0,grad_norm_2; a table with a "
       "column per rank names them"},
      {write_text("neither.csv", "step,loss,grad_norm\n0,1,1\n"),
       "no column 'rank' (have: step,loss,grad_norm; map other names with --columns rank=NAME; a table with a column per "
       "rank names them loss_0, loss_1, ... and grad_norm_0, grad_norm_1, ...)"},
      {write_text("neither.jsonl", "{\"step\": 0, \"loss\": 1, \"grad_norm\": 1}\n"),
       "neither.jsonl (JSON lines) line 1: no field 'rank' (a row with a field per rank names them loss_0, loss_1, ... "
       "and grad_norm_0, grad_norm_1, ...)"},
      {write_text("no_norm.jsonl", "{\"step\": 0, \"loss_0\": 1, \"grad_norm_0\": 1, \"loss_1\": 2}\n"),
       "no_norm.jsonl (JSON lines) line 1: no gradient norm for rank 1 ('grad_norm', or 'grad_norm_1' with a field per "
       "rank), where "},
  };
  for (const auto& [path, expected] : cases) EXPECT_NE(error_of(path).find(expected), std::string::npos) << error_of(path);
  // Gradient norms named by a mapping must be given at some step (a table's header names their columns).
  const ReadOptions mapped{parse_column_mapping("grad_norm=gn")};
  const std::pair<std::string, std::string> mapped_cases[] = {
      {write_text("one_rank.jsonl", "{\"step\": 0, \"loss_0\": 1}\n"),
       "one_rank.jsonl (JSON lines): no row gives the gradient norm 'gn' (mapped from grad_norm) (or 'gn_0', ... "
       "with a field per rank)"},
      {write_text("one_rank.csv", "step,loss_0\n0,1\n"),
       "one_rank.csv (CSV) header: no column 'gn_0' (mapped from grad_norm) (have: step,loss_0; a table with a column "
       "per rank names them loss_0, loss_1, ... and gn_0, gn_1, ...)"},
  };
  for (const auto& [path, expected] : mapped_cases)
    EXPECT_NE(error_of(path, mapped).find(expected), std::string::npos) << error_of(path, mapped);
}

// Many trainers log each rank's loss and no gradient norm: such a log is the loss alone, said in a warning. A mapping
// that names the gradient norm still requires it, and a step gives one for every rank or for none.
TEST(RankLog, ALogOfTheLossAloneIsReadWithAWarning) {
  const std::vector<double> losses{2.4, 2.5, 2.3, 2.2};
  const auto csv = read_rank_log(write_text("loss_only.csv", "step,rank,loss\n0,0,2.4\n0,1,2.5\n1,0,2.3\n1,1,2.2\n"));
  const auto jsonl = read_rank_log(write_text("loss_only.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 2.4}\n"
                                                                 "{\"step\": 0, \"rank\": 1, \"loss\": 2.5}\n"
                                                                 "{\"step\": 1, \"rank\": 1, \"loss\": 2.2}\n"
                                                                 "{\"step\": 1, \"rank\": 0, \"loss\": 2.3}\n"));
  const auto wide = read_rank_log(write_text("loss_only_wide.csv", "step,loss_0,loss_1\n0,2.4,2.5\n1,2.3,2.2\n"));
  const auto wide_lines = read_rank_log(write_text("loss_only_wide.jsonl",
                                                   "{\"step\": 0, \"loss_0\": 2.4, \"loss_1\": 2.5}\n"
                                                   "{\"step\": 1, \"loss_1\": 2.2, \"loss_0\": 2.3}\n"));
  const auto per_rank = read_rank_logs(
      {write_text("loss_rank0.csv", "step,loss\n0,2.4\n1,2.3\n"),
       write_text("loss_rank1.jsonl", "{\"step\": 0, \"loss\": 2.5}\n{\"step\": 1, \"loss\": 2.2}\n")});
  const auto with_cosines = read_rank_log(
      write_text("loss_cos.csv", "step,rank,loss,cos_to_mean\n0,0,2.4,0.5\n0,1,2.5,0.25\n1,0,2.3,1\n1,1,2.2,-1\n"));
  for (const RankLog* log : {&csv, &jsonl, &wide, &wide_lines, &per_rank, &with_cosines}) {
    EXPECT_EQ(log->ranks, 2) << log->source;
    EXPECT_EQ(log->steps, (std::vector<double>{0, 1})) << log->source;
    EXPECT_EQ(log->loss, losses) << log->source;
    EXPECT_TRUE(log->grad_norm.empty()) << log->source;
    ASSERT_EQ(log->warnings.size(), 1u) << log->source;
    EXPECT_EQ(log->warnings[0], log->source + ": no gradient norms ('grad_norm', or 'grad_norm_0', ... with a field "
                                              "per rank): the loss alone is diagnosed; map another name with "
                                              "--columns grad_norm=NAME");
  }
  EXPECT_EQ(with_cosines.cos_to_mean, (std::vector<double>{0.5, 0.25, 1, -1}));
  // A per-rank key mapped with "{rank}": the warning names the pattern of the gradient norm's own name.
  const auto tracked = read_rank_log(
      write_text("loss_only_tracked.csv", "it,rank0/loss,rank1/loss\n0,2.4,2.5\n1,2.3,2.2\n"),
      ReadOptions{parse_column_mapping("step=it,loss=rank{rank}/loss")});
  EXPECT_EQ(tracked.loss, losses);
  ASSERT_EQ(tracked.warnings.size(), 1u);
  EXPECT_NE(tracked.warnings[0].find("no gradient norms ('grad_norm', or 'grad_norm_0', ..."), std::string::npos);

  const ReadOptions mapped{parse_column_mapping("grad_norm=gn")};
  EXPECT_NE(error_of(write_text("unmapped_gn.csv", "step,rank,loss,grad_norm\n0,0,1,1\n"), mapped)
                .find("unmapped_gn.csv (CSV) header: no column 'gn' (mapped from grad_norm) (have: "
                      "step,rank,loss,grad_norm; map other names with --columns grad_norm=NAME)"),
            std::string::npos);
  EXPECT_NE(error_of(write_text("unmapped_gn.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1}\n"), mapped)
                .find("unmapped_gn.jsonl (JSON lines): no row gives the gradient norm 'gn' (mapped from grad_norm)"),
            std::string::npos);
  // So must a cosine (read as none, it was a log without cosines, said nowhere).
  const ReadOptions mapped_cos{parse_column_mapping("cos_to_mean=cos")};
  const auto unmapped_cos = write_text("unmapped_cos.csv", "step,rank,loss,grad_norm,cos_to_mean\n0,0,1,1,0.5\n");
  EXPECT_EQ(error_of(unmapped_cos, mapped_cos), unmapped_cos + " (CSV): no row gives the cosine 'cos' (mapped from "
                                                               "cos_to_mean) (or 'cos_0', ... with a field per rank)");
  try {
    read_rank_logs({write_text("gn_rank0.csv", "step,loss,grad_norm\n0,2.4,1\n"),
                    write_text("gn_rank1.csv", "step,loss\n0,2.5\n")});
    ADD_FAILURE();
  } catch (const RankLogError& e) {
    EXPECT_NE(std::string(e.what()).find("gn_rank1.csv (CSV) line 2: no gradient norm for rank 1"), std::string::npos)
        << e.what();
  }
}

// A loop that logs gradient norms (and cosines) every few steps: the steps between give none, as JSON lines leave the
// field out and a CSV leaves every rank's cell empty (as pandas and W&B's export write a missing value); one rank's
// empty cell among the others' values is a NaN.
TEST(RankLog, GradientNormsAtSomeStepsOnlyAreReadAtThoseSteps) {
  const double nan = std::nan("");
  const auto same = [](const std::vector<double>& got, const std::vector<double>& expected) {
    if (got.size() != expected.size()) return false;
    for (size_t i = 0; i < got.size(); ++i)
      if (!(got[i] == expected[i] || (std::isnan(got[i]) && std::isnan(expected[i])))) return false;
    return true;
  };
  const std::vector<double> norms{1.5, 1.6, nan, nan, nan, nan, 1.7, nan};  // steps 0 and 3; rank 1's NaN at 3
  const std::vector<uint8_t> logged{1, 0, 0, 1};
  const auto jsonl = read_rank_log(write_text("sparse.jsonl",
      "{\"step\": 0, \"rank\": 0, \"loss\": 2, \"grad_norm\": 1.5, \"cos_to_mean\": 0.5}\n"
      "{\"step\": 0, \"rank\": 1, \"loss\": 2, \"grad_norm\": 1.6, \"cos_to_mean\": 0.4}\n"
      "{\"step\": 1, \"rank\": 0, \"loss\": 2}\n{\"step\": 1, \"rank\": 1, \"loss\": 2}\n"
      "{\"step\": 2, \"rank\": 1, \"loss\": 2}\n{\"step\": 2, \"rank\": 0, \"loss\": 2}\n"
      "{\"step\": 3, \"rank\": 0, \"loss\": 2, \"grad_norm\": 1.7, \"cos_to_mean\": 0.3}\n"
      "{\"step\": 3, \"rank\": 1, \"loss\": 2, \"grad_norm\": null, \"cos_to_mean\": 0.2}\n"));
  const auto csv = read_rank_log(write_text("sparse.csv", "step,rank,loss,grad_norm,cos_to_mean\n0,0,2,1.5,0.5\n"
                                                          "0,1,2,1.6,0.4\n1,0,2,,\n1,1,2,,\n2,0,2,,\n2,1,2,,\n"
                                                          "3,0,2,1.7,0.3\n3,1,2,,0.2\n"));
  const auto wide = read_rank_log(write_text("sparse_wide.jsonl",
      "{\"step\": 0, \"loss_0\": 2, \"loss_1\": 2, \"grad_norm_0\": 1.5, \"grad_norm_1\": 1.6, \"cos_to_mean_0\": 0.5, "
      "\"cos_to_mean_1\": 0.4}\n{\"step\": 1, \"loss_0\": 2, \"loss_1\": 2}\n"
      "{\"step\": 2, \"loss_1\": 2, \"loss_0\": 2}\n"
      "{\"step\": 3, \"loss_0\": 2, \"loss_1\": 2, \"grad_norm_0\": 1.7, \"grad_norm_1\": NaN, \"cos_to_mean_0\": 0.3, "
      "\"cos_to_mean_1\": 0.2}\n"));
  for (const RankLog* log : {&jsonl, &csv, &wide}) {
    EXPECT_EQ(log->steps, (std::vector<double>{0, 1, 2, 3})) << log->source;
    EXPECT_TRUE(same(log->grad_norm, norms)) << log->source;
    EXPECT_EQ(log->grad_norm_logged, logged) << log->source;
    EXPECT_TRUE(same(log->cos_to_mean, {0.5, 0.4, nan, nan, nan, nan, 0.3, 0.2})) << log->source;
    EXPECT_EQ(log->cos_to_mean_logged, logged) << log->source;
    EXPECT_TRUE(log->warnings.empty()) << log->source << ": " << log->warnings.front();
  }
  // Every step: no steps to mark. No step (a column the writer left empty): the loss alone, said.
  const auto every =
      read_rank_log(write_text("every.csv", "step,rank,loss,grad_norm\n0,0,2,1\n0,1,2,\n1,0,2,1\n1,1,2,1\n"));
  EXPECT_TRUE(same(every.grad_norm, {1, nan, 1, 1}));
  EXPECT_TRUE(every.grad_norm_logged.empty());
  const auto empty = read_rank_log(write_text("empty.csv", "step,rank,loss,grad_norm,cos_to_mean\n0,0,2,,\n0,1,2,,\n"));
  EXPECT_TRUE(empty.grad_norm.empty() && empty.grad_norm_logged.empty() && empty.cos_to_mean.empty());
  ASSERT_EQ(empty.warnings.size(), 1u);
  EXPECT_NE(empty.warnings[0].find(": no gradient norms ('grad_norm', or 'grad_norm_0', ..."), std::string::npos);
  // A row without one beside a row of its step with one: it would read as a NaN, which the report calls a divergence.
  for (const auto& [field, what] : {std::pair<std::string, std::string>{"grad_norm", "gradient norm"},
                                    {"cos_to_mean", "cosine"}}) {
    const auto path = write_text("some_" + field + ".jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"" + field +
                                                                 "\": 1}\n{\"step\": 0, \"rank\": 1, \"loss\": 1}\n");
    EXPECT_EQ(error_of(path), path + " (JSON lines) line 2: no " + what + " for rank 1 ('" + field + "', or '" +
                                  field + "_1' with a field per rank), where " + path + " (JSON lines) line 1 gives "
                                  "rank 0's at the same step: a step gives one for every rank or for none");
  }
}

TEST(RankLog, ColumnsAreMappedAndOneFilePerRankIsJoined) {
  const auto mapping = parse_column_mapping("loss=train/loss,step=global_step,grad_norm=gn");
  EXPECT_EQ(mapping.at("loss"), "train/loss");
  const auto csv = read_rank_log(write_text("mapped.csv", "global_step,rank,train/loss,gn\n0,0,2.4,1.4\n0,1,2.5,1.5\n"),
                                 ReadOptions{mapping});
  EXPECT_EQ(csv.loss, (std::vector<double>{2.4, 2.5}));
  const auto jsonl = read_rank_log(write_text("mapped.jsonl", "{\"global_step\": 0, \"rank\": 0, \"train/loss\": 2.4, \"gn\": 1.4}\n"),
                                   ReadOptions{mapping});
  EXPECT_EQ(jsonl.loss, (std::vector<double>{2.4}));
  // One file per rank: the rank is the file's position; no rank column needed.
  const auto per_rank = read_rank_logs({write_text("rank0.csv", "step,loss,grad_norm\n0,2.4,1.4\n1,2.3,1.3\n"),
                                        write_text("rank1.jsonl", "{\"step\": 0, \"loss\": 2.5, \"grad_norm\": 1.5}\n"
                                                                  "{\"step\": 1, \"loss\": 2.2, \"grad_norm\": 1.2}\n")});
  EXPECT_EQ(per_rank.ranks, 2);
  EXPECT_EQ(per_rank.loss, (std::vector<double>{2.4, 2.5, 2.3, 2.2}));
  // Pairs (lrkit.diagnose's dict): a name may hold the comma the text form splits at; the same checks.
  const auto pairs = column_mapping({{"loss", "loss, mean"}, {"step", "a=b"}});
  EXPECT_EQ(pairs.at("loss"), "loss, mean");
  EXPECT_EQ(pairs.at("step"), "a=b");
  EXPECT_EQ(read_rank_log(write_text("comma.csv", "a=b,rank,\"loss, mean\",grad_norm\n0,0,2.4,1.4\n"), ReadOptions{pairs}).loss,
            (std::vector<double>{2.4}));
  // The text form splits as a CSV line: blanks around an entry go (before, " step" was an unknown field), and an entry
  // in double quotes holds a comma.
  const auto quoted = parse_column_mapping("\"loss=loss, mean\", step=a=b");
  EXPECT_EQ(quoted, pairs);
  for (const auto& [entries, expected] : std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>>{
           {{{"los", "x"}}, "--columns: unknown field 'los'"},
           {{{"loss", ""}}, "--columns: field 'loss' is mapped to an empty name"},
           {{{"loss", "a"}, {"loss", "b"}}, "--columns: 'loss' is mapped twice"}}) {
    try {
      column_mapping(entries);
      ADD_FAILURE() << expected;
    } catch (const RankLogError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"loss", "'loss' is not FIELD=NAME"},
           {"los=x", "unknown field 'los'"},
           {"loss=a,loss=b", "'loss' is mapped twice"},
           {"\"loss=a,b", "--columns: the quote at character 1 is not closed on its line"},
           {"loss=a, b", "--columns: 'b' is not FIELD=NAME (e.g. loss=train/loss; an entry whose name holds a comma goes "
                         "in double quotes: \"loss=a, b\")"},
           {"", "--columns is empty"}}) {
    try {
      parse_column_mapping(text);
      ADD_FAILURE() << text;
    } catch (const RankLogError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
  try {
    read_rank_log(write_text("unmapped.csv", "global_step,rank,train/loss,gn\n0,0,2.4,1.4\n"));
    ADD_FAILURE();
  } catch (const RankLogError& e) {
    EXPECT_NE(std::string(e.what()).find("no column 'step'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--columns step=NAME"), std::string::npos) << e.what();
  }
}

// Readers disagree on a field written twice (Python's json and csv.DictReader read the last, pandas the first column,
// lrkit read the first JSON member and the last column): refused wherever it is read, in either layout.
TEST(RankLog, AFieldWrittenTwiceIsRefusedWhereItIsRead) {
  const std::string twice = "appears twice, and which one to read is not clear";
  const std::pair<std::string, std::string> cases[] = {
      {write_text("l2.csv", "step,rank,loss,loss,grad_norm\n0,0,1,2,1\n"),
       "l2.csv (CSV) header: column 'loss' appears twice (columns 3 and 4), and which one to read is not clear: rename one"},
      {write_text("s2.csv", "step,rank,loss,grad_norm,step\n0,0,1,1,0\n"), "column 'step' appears twice (columns 1 and 5)"},
      {write_text("w2.csv", "step,loss_0,grad_norm_0,loss_1,grad_norm_1,loss_0\n0,1,1,1,1,1\n"),
       "column 'loss_0' appears twice (columns 2 and 6)"},
      {write_text("g2.csv", "step,loss_0,grad_norm_0,grad_norm_0\n0,1,1,1\n"), "column 'grad_norm_0' appears twice"},
      {write_text("l2.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1, \"loss\": 5}\n"),
       "l2.jsonl (JSON lines) line 1: field 'loss' " + twice},
      {write_text("r2.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1, \"rank\": 1}\n"), "field 'rank' " + twice},
      {write_text("c2.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1, \"cos_to_mean\": 1, \"cos_to_mean\": 0}\n"),
       "field 'cos_to_mean' " + twice},
      {write_text("e2.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1, \"session\": \"fresh\", \"session\": \"resume\"}\n"),
       "field 'session' " + twice},
      {write_text("w2.jsonl", "{\"step\": 0, \"loss_0\": 1, \"grad_norm_0\": 1}\n{\"step\": 1, \"loss_0\": 1, \"grad_norm_0\": 1, \"loss_0\": 2}\n"),
       "w2.jsonl (JSON lines) line 2: field 'loss_0' " + twice},
      {write_text("n2.jsonl", "{\"step\": 0, \"loss_0\": 1, \"grad_norm_0\": 1, \"loss_1\": 1, \"grad_norm_1\": 1, \"grad_norm_1\": 2}\n"),
       "line 1: field 'grad_norm_1' " + twice},
  };
  for (const auto& [path, expected] : cases) EXPECT_NE(error_of(path).find(expected), std::string::npos) << error_of(path);
  // What is not read may repeat: another column, and a wide-looking one beside a rank column.
  for (const std::string& path : {write_text("o2.csv", "step,rank,note,loss,grad_norm,note,loss_0,loss_0\n0,0,a,1,1,b,7,7\n"),
                                  write_text("o2.jsonl", "{\"step\": 0, \"rank\": 0, \"note\": 1, \"loss\": 1, \"grad_norm\": 1, \"note\": 2}\n")}) {
    const RankLog log = read_rank_log(path);
    ASSERT_EQ(log.size(), 1u) << path;
    EXPECT_EQ(log.loss, (std::vector<double>{1})) << path;
  }
}

// A DispersionHook's JSON lines mark the rows of each session's first step. Before, a JSON-lines log recorded no
// session: the report listed no resume and never said a flagged window started at one.
TEST(RankLog, AHooksJsonLinesResumesAreTheMarkedRowsItHolds) {
  const auto rows = [](int from, int to, const std::string& session) {
    std::string text;
    for (int s = from; s < to; ++s)
      for (int rank = 0; rank < 2; ++rank)
        text += "{\"step\": " + std::to_string(s) + ", \"rank\": " + std::to_string(rank) +
                ", \"loss\": 2.0, \"grad_norm\": 1.0, \"cos_to_mean\": 0.9" +
                (s == from && !session.empty() ? ", \"session\": \"" + session + "\"" : std::string()) + "}\n";
    return text;
  };
  // Fresh at 0, resumed at 20 and at 60; the marks of a resume at 40 (then killed) were cut with its rows, as the
  // hook's resume at 20 does.
  const auto log = read_rank_log(write_text("hook_sessions.jsonl", rows(0, 20, "fresh") + rows(20, 60, "resume") +
                                                                       rows(60, 90, "resume")));
  EXPECT_TRUE(log.records_sessions);
  ASSERT_EQ(log.resumes.size(), 2u);
  EXPECT_EQ(log.resumes[0].step, 20);
  EXPECT_EQ(log.resumes[1].step, 60);
  EXPECT_EQ(log.resumes[1].changed, std::nullopt) << "the loop's settings are not the hook's to know";
  EXPECT_EQ(log.size(), 90u) << "a marked row is a row";
  // Rows in another order (per-rank files, a merge): a later resume at or before a mark rewrote the rows after it.
  const auto rewound = read_rank_log(write_text("hook_rewound.jsonl", rows(0, 20, "fresh") + rows(40, 50, "resume") +
                                                                          rows(20, 40, "resume")));
  ASSERT_EQ(rewound.resumes.size(), 1u);
  EXPECT_EQ(rewound.resumes[0].step, 20);
  // A log whose first row is a resume's (a resumed loop given a new log) holds no row from before it.
  const auto started_resumed = read_rank_log(write_text("hook_first_resume.jsonl", rows(30, 40, "resume")));
  EXPECT_TRUE(started_resumed.records_sessions);
  EXPECT_TRUE(started_resumed.resumes.empty());
  // A field "session" of a user's own, and a log without marks, record no session.
  for (const std::string session : {"", "a3f9"}) {
    const auto plain = read_rank_log(write_text("plain_sessions.jsonl", rows(0, 10, session) + rows(10, 20, session)));
    EXPECT_FALSE(plain.records_sessions) << session;
    EXPECT_TRUE(plain.resumes.empty()) << session;
  }
  // One file per rank: every rank's file holds the marks.
  const auto rank_file = [](int rank) {
    std::string text;
    for (int s = 0; s < 30; ++s)
      text += "{\"step\": " + std::to_string(s) + ", \"loss\": 2.0, \"grad_norm\": 1.0" +
              (s == 0 ? std::string(", \"session\": \"fresh\"") : s == 15 ? ", \"session\": \"resume\"" : "") + "}\n";
    return write_text("hook_rank" + std::to_string(rank) + ".jsonl", text);
  };
  const auto joined = read_rank_logs({rank_file(0), rank_file(1)});
  ASSERT_EQ(joined.resumes.size(), 1u);
  EXPECT_EQ(joined.resumes[0].step, 15);
}

}  // namespace
}  // namespace lrkit::diagnostics
