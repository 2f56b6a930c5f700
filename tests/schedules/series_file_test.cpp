#include "lrkit/schedules/series_file.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "killed_writer.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/h5/series_log.hpp"
#include "lrkit/schedules/factory.hpp"
#include "test_files.hpp"

namespace lrkit::schedules {
namespace {

using lrkit::testing::write_text;

// Tables other loggers write, as they write them.
TEST(SeriesFile, TheTablesOfOtherLoggersAreReadByTheirColumnsAndSteps) {
  // Lightning's CSVLogger: one table of every metric, a metric's cell empty in the rows that log others;
  // LearningRateMonitor names a group's rate lr-AdamW/pg1.
  const auto lightning = write_text("metrics.csv",
                                    "epoch,lr-AdamW/pg1,lr-AdamW/pg2,step,train_loss\n"
                                    ",0.001,0.0001,0,\n0,,,0,2.5\n,0.002,0.0002,50,\n0,,,50,2.25\n"
                                    "0,,,99,\n,0.003,0.0003,100,\n");
  const Series pg2 = read_series_file(lightning, "lr-AdamW/pg2", "step");
  EXPECT_EQ(pg2.steps, (std::vector<double>{0, 50, 100})) << "the rows with a value";
  EXPECT_EQ(pg2.values, (std::vector<double>{0.0001, 0.0002, 0.0003})) << "the column named whole, not 'pg2'";
  EXPECT_EQ(read_series_file(lightning, "train_loss", "step").steps, (std::vector<double>{0, 50}));
  // Weights & Biases' run history (_step) and TensorBoard's CSV download (Step).
  EXPECT_EQ(read_series_file(write_text("wandb.csv", "_runtime,_step,train/learning_rate\n1.5,0,1e-4\n3,10,2e-4\n"),
                             "/train/learning_rate", "/train/step")
                .steps,
            (std::vector<double>{0, 10}));
  const auto tensorboard = write_text("tb.csv", "Wall time,Step,Value\n1700000000.5,10,5e-05\n1700000001.5,20,4e-05\n");
  EXPECT_EQ(read_series_file(tensorboard, "Value", "step").steps, (std::vector<double>{10, 20}));
  try {
    read_series_file(tensorboard, "/train/lr", "/train/step");
    ADD_FAILURE() << "no lr column";
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("tb.csv' line 1: no column named 'train/lr' or 'lr' in the header (its "
                                         "columns: 'Wall time', 'Step', 'Value')"),
              std::string::npos)
        << e.what();
  }
  // Without a step column a row's place is its step: an empty cell is refused, not passed over.
  try {
    read_series_file(write_text("gap.csv", "lr,loss\n0.1,2\n,3\n"), "lr", "step");
    ADD_FAILURE() << "an empty cell without steps";
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("gap.csv' line 3: '' is not a number"), std::string::npos) << e.what();
  }
}

TEST(SeriesFile, CsvWithHeaderPicksColumnsByName) {
  const auto path = write_text("h.csv", "# comment\nstep,grad_norm,lr\n0,1.5,0.1\n10,2.5,0.2\n");
  const Series s = read_series_file(path, "/train/lr", "/train/step");
  EXPECT_EQ(s.steps, (std::vector<double>{0, 10}));
  EXPECT_EQ(s.values, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(read_series_file(path, "grad_norm", "").values, (std::vector<double>{1.5, 2.5}));
}

// printf("%+g") and some spreadsheets write the sign of positive numbers too.
TEST(SeriesFile, NumbersWithALeadingPlusAreRead) {
  const Series s = read_series_file(write_text("plus.csv", "step,lr\n+0,+1e-3\n+10,2e-3\n"), "lr", "step");
  EXPECT_EQ(s.steps, (std::vector<double>{0, 10}));
  EXPECT_EQ(s.values, (std::vector<double>{1e-3, 2e-3}));
}

// A spreadsheet's "CSV UTF-8" starts with a byte-order mark: the header's 'step' went unfound and a
// sparse table's rows were read as steps 0, 1, ... without a word.
TEST(SeriesFile, AByteOrderMarkBeforeTheHeaderIsSkipped) {
  const Series s = read_series_file(write_text("bom.csv", "\xEF\xBB\xBFstep,lr\n0,0.1\n100,0.2\n"), "lr", "step");
  EXPECT_EQ(s.steps, (std::vector<double>{0, 100}));
  EXPECT_EQ(s.values, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(read_series_file(write_text("bom_headerless.csv", "\xEF\xBB\xBF" "0,0.1\n100,0.2\n"), "lr", "step").steps,
            (std::vector<double>{0, 100}));
}

// A Weights & Biases export of a run's rate quotes its header and may quote values.
TEST(SeriesFile, QuotedFieldsAreRead) {
  const Series s = read_series_file(write_text("quoted.csv", "\"Step\",\"lr\"\n0,\"0.1\"\n\"100\",0.2\n"), "lr", "Step");
  EXPECT_EQ(s.steps, (std::vector<double>{0, 100}));
  EXPECT_EQ(s.values, (std::vector<double>{0.1, 0.2}));
  try {
    read_series_file(write_text("open_quote.csv", "step,lr\n0,\"0.1\n"), "lr", "step");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("open_quote.csv' line 2: the quote at character 3 is not closed on its line"),
              std::string::npos) << e.what();
  }
}

TEST(SeriesFile, HeaderlessOneAndTwoColumns) {
  EXPECT_EQ(read_series_file(write_text("one.csv", "3\n4\n"), "lr", "step").steps, (std::vector<double>{0, 1}));
  const Series two = read_series_file(write_text("two.tsv", "5\t0.5\n7\t0.7\n"), "lr", "step");
  EXPECT_EQ(two.steps, (std::vector<double>{5, 7}));
  EXPECT_EQ(two.values, (std::vector<double>{0.5, 0.7}));
}

TEST(SeriesFile, ErrorsNameFileAndLine) {
  try {
    read_series_file(write_text("bad.csv", "step,lr\n0,0.1\n1,abc\n"), "lr", "step");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.csv' line 3: 'abc' is not a number"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_series_file("/nonexistent/x.csv", "lr", "step"), SeriesFileError);
  for (const char* endless : {"/dev/zero", "/dev/urandom"}) {  // a device never ends: refused, not read
    try {
      read_series_file(endless, "lr", "step");
      FAIL() << endless;
    } catch (const SeriesFileError& e) {
      EXPECT_EQ(std::string(e.what()), "'" + std::string(endless) + "' is not a regular file (a device or pipe may never end)");
    }
  }
  EXPECT_THROW(read_series_file(write_text("nocol.csv", "a,b\n1,2\n"), "lr", "step"), SeriesFileError);
  EXPECT_THROW(read_series_file(write_text("empty.csv", "lr\n"), "lr", "step"), SeriesFileError);
  try {
    read_series_file(write_text("order.csv", "2,1\n1.5,1\n"), "lr", "step");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("order.csv': steps must increase strictly (row 2: 1.5 after 2)"), std::string::npos)
        << e.what();
  }
}

TEST(SeriesFile, ATablesLastLineCutByAKillIsLeftOutAndSaid) {
  // A loop's csv.writer flushes its buffer at any byte: killed, its last line may end anywhere.
  const Series cut = read_series_file(write_text("cut.csv", "step,lr,loss\n0,0.1,2\n1,0.2,1.9\n2,0.3"), "lr", "step");
  EXPECT_EQ(cut.steps, (std::vector<double>{0, 1})) << "fewer fields than the header: lr may be cut (0.3 of 0.35)";
  EXPECT_TRUE(cut.last_line_cut);
  const Series quoted = read_series_file(write_text("cut_quote.csv", "step,lr\n0,0.1\n1,\"0.2"), "lr", "step");
  EXPECT_EQ(quoted.steps, (std::vector<double>{0})) << "inside a quoted field";
  EXPECT_TRUE(quoted.last_line_cut);
  const Series bare = read_series_file(write_text("cut_bare.csv", "0,1\n1,2\n2"), "", "");
  EXPECT_EQ(bare.values, (std::vector<double>{1, 2})) << "no header: fewer fields than step,value";
  EXPECT_TRUE(bare.last_line_cut);
  const Series whole = read_series_file(write_text("unended.csv", "step,lr,loss\n0,0.1,2\n1,0.2,1.9"), "lr", "step");
  EXPECT_EQ(whole.values, (std::vector<double>{0.1, 0.2})) << "every field there: a file without a last line end";
  EXPECT_FALSE(whole.last_line_cut);
  const Series number = read_series_file(write_text("cut_number.csv", "step,lr\n0,0.1\n1,2e"), "lr", "step");
  EXPECT_EQ(number.values, (std::vector<double>{0.1})) << "a number cut after its exponent's e";
  EXPECT_TRUE(number.last_line_cut);
  EXPECT_EQ(read_series_file(write_text("short_ended.csv", "step,lr,loss\n0,0.1,2\n1,0.2\n"), "lr", "step").values,
            (std::vector<double>{0.1, 0.2}))
      << "a short line with its line end is read as before (the columns asked for are there)";
}

// A loop that appends to its CSV log across a resume from an older checkpoint logs some steps again. Read as a log,
// the resumed session's rows replace the earlier ones from its first step on; read as a table, the steps must increase.
TEST(SeriesFile, ALogsRepeatedStepsAreAResumedSessionsAndATablesAreRefused) {
  const auto path = write_text("appended.csv", "step,lr\n0,0.1\n1,0.2\n2,0.3\n3,0.4\n2,0.35\n3,0.45\n4,0.5\n3,0.46\n");
  const Series log = read_series_file(path, "lr", "step", RepeatedSteps::Replace);
  EXPECT_EQ(log.steps, (std::vector<double>{0, 1, 2, 3}));
  EXPECT_EQ(log.values, (std::vector<double>{0.1, 0.2, 0.35, 0.46}));
  EXPECT_EQ(log.replaced, 4u);  // 2 and 3 of the first session, 3 and 4 of the second
  try {
    read_series_file(path, "lr", "step");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("appended.csv': steps must increase strictly (row 5: 2 after 3)"),
              std::string::npos)
        << e.what();
  }
  // A step that is no number cannot be placed: named by its row.
  const auto h5_path = (lrkit::testing::scratch_dir() / "nan_step.h5").string();
  {
    h5::Writer w(h5_path);
    w.write_series("/train/step", std::vector<double>{0, NAN, 2});
    w.write_series("/train/lr", std::vector<double>{0.1, 0.2, 0.3});
  }
  try {
    read_series_file(h5_path, "/train/lr", "/train/step", RepeatedSteps::Replace);
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_EQ(std::string(e.what()), "'" + h5_path + "': row 2 has no step (nan)");
  }
}

// A damaged log (.h5) was read as a CSV table and its bytes quoted as a number; a binary file named .csv
// failed on whichever byte came first.
TEST(SeriesFile, ADamagedLogOrABinaryFileIsNamedAsSuch) {
  const auto error_of = [](const std::string& path) -> std::string {
    try {
      read_series_file(path, "/train/grad_norm", "/train/step");
    } catch (const SeriesFileError& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string binary("\x7f" "ELF\r\n\x1a\n\x00\x01\xff garbage\n1,2\n", 20);
  for (const char* name : {"damaged.h5", "damaged.HDF5"}) {
    const auto path = write_text(name, binary);
    EXPECT_EQ(error_of(path), "'" + path + "' is not an HDF5 file (or is truncated); a CSV or TSV table needs another name");
  }
  const auto cut = write_text("cut.h5", std::string("\x89HDF\r\n\x1a\n", 8) + std::string(100, '\0'));
  EXPECT_EQ(error_of(cut), "cannot open HDF5 file '" + cut + "' (damaged or truncated?)") << "HDF5's signature, then nothing";
  const auto csv = write_text("binary.csv", "step,grad_norm\n" + binary);
  EXPECT_EQ(error_of(csv), "'" + csv + "' holds a NUL byte (byte 23): a binary file, not a CSV or TSV table");
  EXPECT_EQ(read_series_file(write_text("h5.dir.csv", "0,1\n1,2\n"), "lr", "step").values, (std::vector<double>{1, 2}))
      << "a dot in a name before the extension is no extension";
}

TEST(SeriesFile, Hdf5DatasetsAndMissingDataset) {
  const auto path = (lrkit::testing::scratch_dir() / "run.h5").string();
  {
    h5::Writer w(path);
    w.write_series("/train/step", std::vector<int64_t>{0, 1, 2, 3});
    w.write_series("/train/grad_norm", std::vector<double>{2, 2, 2, 2});
    w.write_series("/train/lr", std::vector<double>{0.1, 0.2, 0.3, 0.4});
  }
  EXPECT_EQ(read_series_file(path, "/train/lr", "/train/step").values, (std::vector<double>{0.1, 0.2, 0.3, 0.4}));
  EXPECT_EQ(read_series_file(path, "/train/lr", "/train/absent").steps, (std::vector<double>{0, 1, 2, 3}));
  try {
    read_series_file(path, "/train/grad_norm_l1", "");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("no dataset '/train/grad_norm_l1'"), std::string::npos) << e.what();
  }
}

// Steps and values of unequal length: an error in a closed file, the rows both
// have in a run log a killed writer left marked (its last flush cut short).
TEST(SeriesFile, AKilledWritersLogGivesTheRowsBothSeriesHave) {
  const auto closed = (lrkit::testing::scratch_dir() / "uneven.h5").string();
  {
    h5::Writer w(closed);
    w.write_series("/train/step", std::vector<double>{0, 1});
    w.write_series("/train/lr", std::vector<double>{0.1, 0.2, 0.3});
  }
  try {
    read_series_file(closed, "/train/lr", "/train/step");
    FAIL();
  } catch (const SeriesFileError& e) {
    EXPECT_NE(std::string(e.what()).find("/train/step has 2 rows but /train/lr has 3"), std::string::npos) << e.what();
  }
  const auto killed = (lrkit::testing::scratch_dir() / "killed.h5").string();
  lrkit::testing::write_as_killed(killed, {{"/train/lr"}, {"/train/step"}}, [](h5::SeriesLog& log) {
    for (const double lr : {0.1, 0.2, 0.3}) log.append("/train/lr", lr);
    for (const double step : {0.0, 1.0}) log.append("/train/step", step);
  });
  const auto series = read_series_file(killed, "/train/lr", "/train/step");
  EXPECT_EQ(series.values, (std::vector<double>{0.1, 0.2}));
  EXPECT_EQ(series.steps, (std::vector<double>{0, 1}));
}

TEST(TableSchedule, InterpolatesBetweenRowsAndHoldsTheEnds) {
  const auto path = write_text("my table.csv", "step,lr\n0,0\n10,1\n30,0.5\n");
  const auto s = parse_schedule("table(\"" + path + "\")", std::nullopt);
  EXPECT_EQ(s.total(), 30);
  EXPECT_DOUBLE_EQ(s(5), 0.5);
  EXPECT_DOUBLE_EQ(s(20), 0.75);
  EXPECT_DOUBLE_EQ(s(99), 0.5);
  EXPECT_EQ(parse_schedule(s.to_spec(), std::nullopt).to_spec(), s.to_spec());
  try {
    parse_schedule("table(file=" + write_text("neg.csv", "0,0.1\n1,-0.1\n") + ")", std::nullopt);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(e.rule().find("row 2 holds learning rate -0.1"), std::string::npos) << e.what();
  }
  // nan and inf read as numbers, as in an HDF5 file; a table refuses them as rates.
  const auto nonfinite = write_text("nonfinite.csv", "step,lr\n0,0.1\n1,nan\n2,inf\n3,-inf\n");
  const Series read = read_series_file(nonfinite, "lr", "step");
  ASSERT_EQ(read.values.size(), 4u);
  EXPECT_TRUE(std::isnan(read.values[1]) && read.values[2] == HUGE_VAL && read.values[3] == -HUGE_VAL);
  try {
    parse_schedule("table(file=" + nonfinite + ")", std::nullopt);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(e.rule().find("row 2 holds learning rate nan; rates must be finite and >= 0"), std::string::npos) << e.what();
  }
}

TEST(RefinedSchedule, ReadsNormsFromARunLogOrCsv) {
  const auto path = (lrkit::testing::scratch_dir() / "norms.h5").string();
  {
    h5::Writer w(path);
    w.write_series("/train/grad_norm", std::vector<double>(20, 2.0));
  }
  const auto s = parse_schedule("refined(norms=" + path + ", peak=1e-3)", 100);
  const auto linear = parse_schedule("linear(peak=1e-3)", 100);
  for (int64_t t = 0; t <= 100; ++t) EXPECT_NEAR(s(t), linear(t), 1e-15);
  const auto csv = write_text("norms.csv", "grad_norm_l1\n1\n1\n1\n");
  EXPECT_NEAR(parse_schedule("refined(" + csv + ", 1, norm=l1)", 10)(5), 0.5, 1e-12);
  try {
    parse_schedule("refined(norms=" + path + ", peak=1, norm=l1)", 100);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(e.rule().find("grad_norm_l1"), std::string::npos) << e.what();
  }
  // A dataset of the wrong shape ([steps, ranks] instead of one value per step) builds nothing.
  const auto matrix = (lrkit::testing::scratch_dir() / "norms_matrix.h5").string();
  {
    h5::SeriesLog log(matrix, {{"/train/grad_norm", 3, true}});
    for (int i = 0; i < 10; ++i) log.append("/train/grad_norm", {1.0, 2.0, 3.0});
  }
  try {
    parse_schedule("refined(norms=" + matrix + ", peak=1e-3)", 10);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(std::string(e.what()).find("is not 1-dimensional"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_schedule("refined(norms=/nonexistent.h5, peak=1)", 100), SpecError);
}

// A run directory stands for its log, as in lrkit diagnose, log and refine; a folder without one is named as such.
TEST(RefinedSchedule, ARunDirectoryStandsForItsLog) {
  const auto run = lrkit::testing::scratch_dir() / "refined_run";
  std::filesystem::create_directories(run);
  {
    h5::Writer w((run / "log.h5").string());
    w.write_series("/train/step", std::vector<int64_t>{0, 1, 2, 3});
    w.write_series("/train/grad_norm", std::vector<double>{4, 3, 2, 1});
    w.write_series("/train/lr", std::vector<double>{0.1, 0.2, 0.3, 0.4});
  }
  const auto from_dir = parse_schedule("refined(norms=" + run.string() + ", peak=1)", 10);
  const auto from_log = parse_schedule("refined(norms=" + (run / "log.h5").string() + ", peak=1)", 10);
  for (int64_t t = 0; t <= 10; ++t) EXPECT_EQ(from_dir(t), from_log(t)) << t;
  EXPECT_DOUBLE_EQ(parse_schedule("table(file=" + run.string() + ")", std::nullopt)(2), 0.3);
  const auto empty = lrkit::testing::scratch_dir() / "no_log_here";
  std::filesystem::create_directories(empty);
  try {
    parse_schedule("refined(norms=" + empty.string() + ", peak=1)", 10);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(e.rule().find("'" + empty.string() + "' is a directory without a run log (log.h5)"), std::string::npos)
        << e.what();
  }
}

// A loop's GradNormRecorder.save() writes a skipped update's norm as nan or inf (Python's words): such a file refines
// as the one with that norm filled in from its neighbours.
TEST(RefinedSchedule, ACsvWithSkippedUpdatesRefinesAsTheFilledNorms) {
  const auto skipped = write_text("skipped_norms.csv", "step,grad_norm,grad_norm_l1\n0,9,inf\n1,9,3\n2,9,nan\n3,9,5\n");
  const auto filled = write_text("filled_norms.csv", "grad_norm_l1\n3\n3\n4\n5\n");
  const auto a = parse_schedule("refined(norms=" + skipped + ", peak=1, norm=l1, tau=0)", 8);
  const auto b = parse_schedule("refined(norms=" + filled + ", peak=1, norm=l1, tau=0)", 8);
  for (int64_t t = 0; t <= 8; ++t) EXPECT_EQ(a(t), b(t)) << t;
  try {
    parse_schedule("refined(norms=" + write_text("all_skipped.csv", "nan\ninf\n") + ", peak=1)", 8);
    FAIL();
  } catch (const SpecError& e) {
    EXPECT_NE(e.rule().find("no gradient norm of the 2 is finite: every update of that run was skipped or diverged"),
              std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace lrkit::schedules
