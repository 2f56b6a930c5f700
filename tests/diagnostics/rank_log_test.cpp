// Reading per-rank logs: lrkit run logs (their resumes, their datasets), and files of every kind refused by name;
// CSV and JSON lines in text_rank_log_test.cpp.
#include "lrkit/diagnostics/rank_log.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "killed_writer.hpp"
#include "lrkit/h5/series_log.hpp"
#include "rank_log_refusal.hpp"
#include "test_files.hpp"

namespace lrkit::diagnostics {
namespace {

using lrkit::testing::write_text;

TEST(RankLog, BadFilesNameTheProblem) {
  const std::pair<std::string, std::string> cases[] = {
      {write_text("a.csv", "step,rank,grad_norm\n0,0,1\n"), "no column 'loss'"},
      {write_text("b.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,0,1,1\n"), "line 3: step 0 rank 0 appears twice"},
      {write_text("c.csv", "step,rank,loss,grad_norm\n1,1,1,1\n"), "no step has a row for every one of its 2 ranks"},
      {write_text("r.csv", "step,rank,loss,grad_norm\n0,1.5,1,1\n"), "line 2 column rank: '1.5' is not a rank"},
      {write_text("d.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,1,1\n1,0,1,1\n"), "line 3: 3 fields, the header has 4 (truncated file?)"},
      {write_text("w.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,1,1,1,5\n"), "line 3: 5 fields, the header has 4 (an unquoted comma in a field?)"},
      {write_text("e.csv", "step,rank,loss,grad_norm\n0,0,abc,1\n"), "line 2 column loss: 'abc' is not a number"},
      {write_text("s.csv", "step,rank,loss,grad_norm\n0,0,1,1\nnan,0,1,1\n"), "line 3 column step: 'nan' is not a step"},
      {write_text("t.csv", "step,rank,loss,grad_norm\n0.5,0,1,1\n"), "line 2 column step: '0.5' is not a step"},
      {write_text("s.jsonl", "{\"step\": Infinity, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1}\n"),
       "line 1 field step: 'Infinity' is not a step"},
      {write_text("u.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": NaNa, \"grad_norm\": 1}\n"), "line 1: not a JSON object"},
      {write_text("v.jsonl", "{\"step\": 0, \"rank\": 0, \"grad_norm\": 1, \"loss\": -Infin\n"), "line 1: not a JSON object"},
      {write_text("f.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1}\n{\"step\": 0, \"rank\": 1, \"lo\n"), "line 2: not a JSON object"},
      {write_text("g.jsonl", "{\"step\": 0, \"rank\": 0, \"grad_norm\": 1}\n"), "line 1: no field 'loss'"},
      {write_text("h.txt", "whatever"), "neither an HDF5 run log nor a .csv / .jsonl"},
      {"/nonexistent/ranks.csv", "'/nonexistent/ranks.csv' does not exist"},
      {write_text("i.csv", ""), "empty file"},
      {"/dev/zero", "'/dev/zero' is not a regular file (a device or pipe may never end)"},
      // A norm below 0 or a cosine past 1: the column holds another quantity, and its report would be garbage.
      {write_text("n.csv", "step,rank,loss,grad_norm\n0,0,1,1\n0,1,1,-0.5\n"),
       "n.csv (CSV) line 3 column grad_norm: '-0.5' is not a gradient norm (a norm is >= 0)"},
      {write_text("c.jsonl", "{\"step\": 0, \"rank\": 0, \"loss\": 1, \"grad_norm\": 1, \"cos_to_mean\": 1.5}\n"),
       "c.jsonl (JSON lines) line 1 field cos_to_mean: '1.5' is not a cosine (in [-1, 1])"},
  };
  for (const auto& [path, expected] : cases) EXPECT_NE(error_of(path).find(expected), std::string::npos) << error_of(path);
}

TEST(RankLog, ARunLogsResumesAreThoseWhoseRowsItHolds) {
  const auto path = (lrkit::testing::scratch_dir() / "resumed_log.h5").string();
  const auto session = [](int index, const std::string& step, const std::string& changed) {
    const std::string object = "/sessions/" + std::to_string(index);
    return std::vector<h5::SeriesLog::Attribute>{{object, "step", step}, {object, "changed", changed}};
  };
  std::vector<h5::SeriesLog::Attribute> sessions;
  // 0 from step 0; 1 resumed at 40 (then killed); 2 resumed at 20 from an earlier checkpoint, rewriting 1's rows;
  // 3 resumed at 60; 4 not a step (damaged); 5 resumed at 95, past the last row the log holds.
  for (const auto& [index, step, changed] : std::vector<std::tuple<int, std::string, std::string>>{
           {0, "0", ""}, {1, "40", "train.threads = 2 -> 1"}, {2, "20", ""}, {3, "60", "log.flush_every = 10 -> 5"},
           {4, "x", ""}, {5, "95", ""}}) {
    const auto attributes = session(index, step, changed);
    sessions.insert(sessions.end(), attributes.begin(), attributes.end());
  }
  {
    h5::SeriesLog log(path, {{"/train/step", 1}, {"/train/grad_norm", 1}, {"/ranks/loss", 2, true}, {"/ranks/grad_norm", 2, true}},
                      sessions);
    for (int s = 0; s < 90; ++s) {
      log.append("/train/step", s);
      log.append("/train/grad_norm", 1.0);
      log.append("/ranks/loss", {2.0, 2.1});
      log.append("/ranks/grad_norm", {1.0, 1.1});
    }
  }
  const auto log = read_rank_log(path);
  EXPECT_TRUE(log.records_sessions);
  ASSERT_EQ(log.resumes.size(), 2u);
  EXPECT_EQ(log.resumes[0].step, 20);
  EXPECT_EQ(log.resumes[0].changed, std::optional<std::string>(""));
  EXPECT_EQ(log.resumes[1].step, 60);
  EXPECT_EQ(log.resumes[1].changed, std::optional<std::string>("log.flush_every = 10 -> 5"));
  ASSERT_EQ(log.warnings.size(), 1u);
  EXPECT_NE(log.warnings[0].find("/sessions/4 has no whole step (attribute 'step')"), std::string::npos) << log.warnings[0];
}

TEST(RankLog, RunLogsMustHaveTheRankDatasetsWithMatchingLengths) {
  const auto dir = lrkit::testing::scratch_dir();
  const auto good = (dir / "good_log.h5").string();
  {
    h5::SeriesLog log(good, {{"/train/step", 1}, {"/train/grad_norm", 1}, {"/ranks/loss", 2, true}, {"/ranks/grad_norm", 2, true}});
    for (int s = 0; s < 3; ++s) {
      log.append("/train/step", s);
      log.append("/train/grad_norm", 1.0);
      log.append("/ranks/loss", {2.0 + s, 2.1 + s});
      log.append("/ranks/grad_norm", {1.0, 1.1});
    }
  }
  const auto log = read_rank_log(good);
  EXPECT_EQ(log.ranks, 2);
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.at(log.loss, 2, 1), 4.1);
  EXPECT_TRUE(log.skipped.empty()) << "a log written before /train/skipped";
  // /train/skipped, where the log has it, is read; its length is checked as every series' is.
  const auto with_skips = (dir / "skips_log.h5").string();
  const std::vector<h5::SeriesLog::Column> columns = {
      {"/train/step", 1}, {"/train/grad_norm", 1}, {"/train/skipped", 1}, {"/ranks/loss", 2, true}, {"/ranks/grad_norm", 2, true}};
  for (const bool whole : {false, true}) {
    {
      h5::SeriesLog writer(with_skips, columns);
      for (int s = 0; s < 3; ++s) {
        writer.append("/train/step", s);
        writer.append("/train/grad_norm", 1.0);
        if (whole || s < 2) writer.append("/train/skipped", s == 1 ? 3.0 : 0.0);
        writer.append("/ranks/loss", {2.0, 2.1});
        writer.append("/ranks/grad_norm", {1.0, 1.1});
      }
    }
    if (whole) {
      EXPECT_EQ(read_rank_log(with_skips).skipped, (std::vector<double>{0, 3, 0}));
    } else {
      EXPECT_NE(error_of(with_skips).find("/train/skipped has 2 rows but /train/step has 3"), std::string::npos) << error_of(with_skips);
    }
  }

  const auto short_ranks = (dir / "short_log.h5").string();
  {
    h5::SeriesLog writer(short_ranks, {{"/train/step", 1}, {"/train/grad_norm", 1}, {"/ranks/loss", 2, true}, {"/ranks/grad_norm", 2, true}});
    for (int s = 0; s < 3; ++s) {
      writer.append("/train/step", s);
      writer.append("/train/grad_norm", 1.0);
      writer.append("/ranks/loss", {2.0, 2.1});
      if (s < 2) writer.append("/ranks/grad_norm", {1.0, 1.1});
    }
  }
  EXPECT_NE(error_of(short_ranks).find("/ranks/grad_norm is [2, 2] but /train/step has 3 rows"), std::string::npos)
      << error_of(short_ranks);
  // The same rows left by a killed writer (the file keeps its mark): the last
  // flush was cut short, so the steps every series has are read, with a warning.
  const auto killed = (dir / "killed_log.h5").string();
  lrkit::testing::write_as_killed(
      killed, {{"/train/step", 1}, {"/train/grad_norm", 1}, {"/ranks/loss", 2, true}, {"/ranks/grad_norm", 2, true}},
      [](h5::SeriesLog& writer) {
        for (int s = 0; s < 3; ++s) {
          writer.append("/train/step", s);
          writer.append("/train/grad_norm", 1.0);
          writer.append("/ranks/loss", {2.0 + s, 2.1 + s});
          if (s < 2) writer.append("/ranks/grad_norm", {1.0, 1.1});
        }
      });
  const auto cut = read_rank_log(killed);
  EXPECT_EQ(cut.size(), 2u);
  EXPECT_EQ(cut.steps, (std::vector<double>{0, 1}));
  EXPECT_EQ(cut.loss, (std::vector<double>{2.0, 2.1, 3.0, 3.1}));
  EXPECT_EQ(cut.global_grad_norm.size(), 2u);
  ASSERT_EQ(cut.warnings.size(), 1u);
  EXPECT_NE(cut.warnings[0].find("read the 2 steps every series has; up to 1 more rows"), std::string::npos) << cut.warnings[0];
  // Steps that do not increase, a negative norm and a cosine past 1 are named with the step and rank.
  const auto write_log = [&](const std::string& name, const std::vector<double>& steps, double norm, double cos) {
    const auto path = (dir / name).string();
    h5::SeriesLog writer(path, {{"/train/step", 1}, {"/train/grad_norm", 1}, {"/ranks/loss", 2, true},
                                {"/ranks/grad_norm", 2, true}, {"/ranks/cos_to_mean", 2, true}});
    for (size_t s = 0; s < steps.size(); ++s) {
      writer.append("/train/step", steps[s]);
      writer.append("/train/grad_norm", 1.0);
      writer.append("/ranks/loss", {2.0, 2.1});
      writer.append("/ranks/grad_norm", {1.0, s == 2 ? norm : 1.1});
      writer.append("/ranks/cos_to_mean", {s == 1 ? cos : 0.5, std::nan("")});
    }
    return path;
  };
  EXPECT_EQ(read_rank_log(write_log("in_range.h5", {5, 6, 7}, -INFINITY, 1.0004)).size(), 3u)
      << "NaN and Inf (a diverged rank's) and a cosine rounded past 1 are read";
  const std::pair<std::string, std::string> out_of_range[] = {
      {write_log("repeated_step.h5", {5, 6, 6}, 1, 0.5), "/train/step does not increase at row 2 (6 after 6)"},
      {write_log("negative_norm.h5", {5, 6, 7}, -2, 0.5), "/ranks/grad_norm at step 7, rank 1 is -2, which is not a gradient norm"},
      {write_log("wide_cosine.h5", {5, 6, 7}, 1, -3), "/ranks/cos_to_mean at step 6, rank 0 is -3, which is not a cosine"},
  };
  for (const auto& [path, expected] : out_of_range) EXPECT_NE(error_of(path).find(expected), std::string::npos) << error_of(path);
  const auto no_ranks = (dir / "no_ranks.h5").string();
  { h5::SeriesLog writer(no_ranks, {{"/train/step", 1}}); }
  EXPECT_NE(error_of(no_ranks).find("no dataset /ranks/loss"), std::string::npos) << error_of(no_ranks);
  // A truncated file keeps its HDF5 signature but cannot be read.
  const auto truncated = (dir / "truncated_log.h5").string();
  std::filesystem::copy_file(good, truncated, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(truncated, std::filesystem::file_size(good) / 2);
  EXPECT_NE(error_of(truncated), "no error");
}

}  // namespace
}  // namespace lrkit::diagnostics
