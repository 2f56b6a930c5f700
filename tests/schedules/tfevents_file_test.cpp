// TensorBoard event files: the golden files tests/golden/make_tfevents.py writes with the protobuf library, read as
// TensorBoard shows them; damaged, cut and mutated files refused by name or read up to the damage, never a crash.
#include "lrkit/schedules/tfevents_file.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "lrkit/common/text_file.hpp"
#include "lrkit/common/tfevents.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/refine.hpp"
#include "lrkit/schedules/series_file.hpp"
#include "test_files.hpp"
#include "tfevents_writer.hpp"

namespace lrkit::schedules {
namespace {

using testing::tfrecord;
using testing::write_bytes;

const std::string kGolden = std::string(LRKIT_GOLDEN_DIR) + "/tfevents";

std::string read_error(const std::vector<std::string>& files, const std::string& tag) {
  try {
    read_tfevents_series(files, tag);
  } catch (const SeriesFileError& e) {
    return e.what();
  }
  return "(no error)";
}

// make_tfevents.py's rates: transformers' get_cosine_schedule_with_warmup (peak 5e-4, 20 of 200 warming up), and
// the plain loop's cosine(peak=0.1, warmup=10) over 80 updates.
double hf_cosine_rate(int64_t step) {
  if (step < 20) return 5e-4 * static_cast<double>(step) / 20;
  const double progress = static_cast<double>(step - 20) / 180;
  return 5e-4 * std::max(0.0, 0.5 * (1.0 + std::cos(M_PI * 0.5 * 2.0 * progress)));
}
double loop_rate(int64_t step) {
  if (step < 10) return 0.1 * static_cast<double>(step) / 10;
  return 0.1 * 0.5 * (1.0 + std::cos(M_PI * static_cast<double>(step - 10) / 70));
}

// The records' data of an event file.
std::vector<std::string> records_of(const std::string& path) {
  std::vector<std::string> records;
  TfRecordReader reader(path);
  for (std::string data; reader.next(data);) records.push_back(data);
  return records;
}

TEST(TfRecord, ChecksumsAreMaskedAsTfRecordsMaskThem) {
  // Every event file begins with the length 24 of its file_version event: 18 00 .. 00, then a3 7f 4b 22.
  const unsigned char length[8] = {24, 0, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(masked_crc32c(length, 8), 0x224B7FA3u);
}

TEST(TfRecord, RecordsAcrossTheReadersChunksAndLargerThanOneReadBack) {
  // The reader reads 1 MiB at a time: records that straddle its chunks, one of 1.5 MiB, and one cut by the file's
  // end (a writer killed mid-write), read back byte for byte up to the cut.
  std::vector<std::string> written;
  std::string bytes;
  for (size_t k = 0; bytes.size() < (size_t{3} << 20); ++k) {
    const size_t size = k == 40 ? (size_t{3} << 19) : 1000 + (k * 7919) % 60000;
    std::string data(size, '\0');
    for (size_t i = 0; i < size; ++i) data[i] = static_cast<char>((i * 31 + k * 17) & 0xFF);
    written.push_back(data);
    bytes += tfrecord(data);
  }
  const std::string last = tfrecord(std::string(5000, 'x'));
  const auto path = write_bytes("chunks.tfevents", bytes + last.substr(0, last.size() - 1));
  const std::vector<std::string> read = records_of(path);
  ASSERT_EQ(read.size(), written.size());
  for (size_t k = 0; k < read.size(); ++k) EXPECT_TRUE(read[k] == written[k]) << "record " << k;
}

TEST(TfEventsFile, AnotherWritersBytesRead) {
  // The 123 bytes tensorboard_logger's test_serialization expects its writer to write for log_value('v/1', 1.5, 1)
  // and log_value('v/22', 16.0, 2) at wall time 256.5: a writer independent of the golden files' generator.
  const std::string bytes(
      "\x18\x00\x00\x00\x00\x00\x00\x00\xa3\x7f\x4b\x22\x09\x00\x00\x00\x00\x00\x08\x70\x40\x1a\x0d\x62\x72\x61"
      "\x69\x6e\x2e\x45\x76\x65\x6e\x74\x3a\x32\xbc\x98\x21\x2b\x19\x00\x00\x00\x00\x00\x00\x00\x8b\xf1\x08\x28"
      "\x09\x00\x00\x00\x00\x00\x08\x70\x40\x10\x01\x2a\x0c\x0a\x0a\x0a\x03\x76\x2f\x31\x15\x00\x00\xc0\x3f\x2c\xec"
      "\xc0\x87\x1a\x00\x00\x00\x00\x00\x00\x00\x12\x9b\xd8\x2d\x09\x00\x00\x00\x00\x00\x08\x70\x40\x10\x02\x2a\x0d"
      "\x0a\x0b\x0a\x04\x76\x2f\x32\x32\x15\x00\x00\x80\x41\x8f\xa3\xb6\x88",
      123);
  const auto path = write_bytes("tensorboard_logger/events.out.tfevents.256.host", bytes);
  EXPECT_TRUE(is_tfevents_file(path));
  const Series one = read_tfevents_series({path}, "v/1");
  EXPECT_EQ(one.steps, std::vector<double>{1});
  EXPECT_EQ(one.values, std::vector<double>{1.5});
  const Series other = read_series_file((testing::scratch_dir() / "tensorboard_logger").string(), "/v/22", "");
  EXPECT_EQ(other.steps, std::vector<double>{2});
  EXPECT_EQ(other.values, std::vector<double>{16});
}

TEST(TfEventsFile, AHuggingFaceTrainerLogIsReadAtEveryLoggingStep) {
  const std::string run = kGolden + "/hf_cosine";
  const auto files = tfevents_files_in(run);
  ASSERT_EQ(files.size(), 1u);
  EXPECT_TRUE(is_tfevents_file(files.front()));
  const Series lr = read_tfevents_series(files, "train/learning_rate");
  ASSERT_EQ(lr.steps.size(), 20u);
  for (size_t i = 0; i < lr.steps.size(); ++i) {
    const auto step = static_cast<int64_t>(10 * (i + 1));
    EXPECT_EQ(lr.steps[i], static_cast<double>(step));
    EXPECT_FLOAT_EQ(static_cast<float>(lr.values[i]), static_cast<float>(hf_cosine_rate(step))) << step;
  }
  EXPECT_EQ(lr.values.back(), 0.0);  // written although 0: simple_value is one of a oneof
  EXPECT_EQ(lr.replaced, 0u);
  // The directory, the file, and the dataset-style name with its '/' read the same series.
  EXPECT_EQ(read_series_file(run, "/train/learning_rate", "/train/step").values, lr.values);
  EXPECT_EQ(read_series_file(files.front(), "train/learning_rate", "step").steps, lr.steps);
  EXPECT_EQ(read_series_file(run, "/train/train_runtime", "").values, std::vector<double>{61.5});
}

TEST(TfEventsFile, TheSpecsThatReadASeriesReadATrainersRun) {
  // refined's default column /train/grad_norm is the Trainer's tag train/grad_norm.
  const std::string run = kGolden + "/hf_cosine";
  const Schedule refined = parse_schedule("refined(norms=" + run + ", peak=1e-3)", 200);
  const Series norms = read_series_file(run, "/train/grad_norm", "");
  ASSERT_EQ(norms.values.size(), 20u);
  const std::vector<double> multipliers = refine_from_norms(norms.values, 200, NormKind::L2);
  for (int64_t t = 0; t < 200; t += 13) EXPECT_DOUBLE_EQ(refined(t), 1e-3 * multipliers[static_cast<size_t>(t)]) << t;
  // table interpolates between the logged steps.
  const Schedule table = parse_schedule("table(file=" + run + ", column=train/learning_rate)", 200);
  const double at_10 = static_cast<float>(hf_cosine_rate(10)), at_20 = static_cast<float>(hf_cosine_rate(20));
  EXPECT_DOUBLE_EQ(table(15), (at_10 + at_20) / 2);
}

TEST(TfEventsFile, AResumedSessionsRowsReplaceTheRowsItLoggedAgain) {
  // Session 1 logged 10..150; session 2, resumed from checkpoint-100, logged 110..200 with a loss 0.01 higher.
  const Series loss = read_series_file(kGolden + "/hf_resumed", "/train/loss", "");
  ASSERT_EQ(loss.steps.size(), 20u);
  EXPECT_EQ(loss.replaced, 5u);
  for (size_t i = 0; i < loss.steps.size(); ++i) {
    const double step = loss.steps[i];
    EXPECT_EQ(step, 10.0 * static_cast<double>(i + 1));
    const double expected = 3.0 / (1.0 + step / 50.0) + (step > 100 ? 0.01 : 0.0);
    EXPECT_FLOAT_EQ(static_cast<float>(loss.values[i]), static_cast<float>(expected)) << step;
  }
}

TEST(TfEventsFile, ASessionStartDropsEveryTagsRowsFromItsStep) {
  // Session 1 logged lr and loss at 0..59; session 2 (SummaryWriter(purge_step=40)) logged lr alone at 40..79,
  // from a scheduler built anew.
  const auto files = tfevents_files_in(kGolden + "/restarted");
  ASSERT_EQ(files.size(), 2u);
  const Series lr = read_tfevents_series(files, "lr");
  ASSERT_EQ(lr.steps.size(), 80u);
  EXPECT_EQ(lr.replaced, 20u);
  for (int64_t t = 0; t < 80; ++t) {
    EXPECT_EQ(lr.steps[static_cast<size_t>(t)], static_cast<double>(t));
    if (t < 40)
      EXPECT_EQ(lr.values[static_cast<size_t>(t)], static_cast<double>(static_cast<float>(loop_rate(t)))) << t;
    else
      EXPECT_EQ(lr.values[static_cast<size_t>(t)], loop_rate(t - 40)) << t;  // double_val: no rounding
  }
  const Series loss = read_tfevents_series(files, "loss");
  EXPECT_EQ(loss.steps.size(), 40u);  // the tag session 2 never logged loses its rows from 40 on too
  EXPECT_EQ(loss.steps.back(), 39.0);
  EXPECT_EQ(loss.replaced, 20u);
}

TEST(TfEventsFile, EveryFormOfAScalarReads) {
  const std::vector<std::string> file{kGolden + "/forms.tfevents"};
  for (const char* tag : {"simple", "float_val", "float_content"}) {
    const Series s = read_tfevents_series(file, tag);
    EXPECT_EQ(s.values, (std::vector<double>{0.25, 0.5, 0.75, 1.0, 1.25})) << tag;
    EXPECT_EQ(s.steps, (std::vector<double>{0, 1, 2, 3, 4})) << tag;
  }
  for (const char* tag : {"double_val", "double_content"})
    EXPECT_EQ(read_tfevents_series(file, tag).values,
              (std::vector<double>{0.25 / 3, 0.5 / 3, 0.75 / 3, 1.0 / 3, 1.25 / 3}))
        << tag;
}

TEST(TfEventsFile, TagsThatAreNoScalarsAndMissingTagsAreNamed) {
  const std::string path = kGolden + "/forms.tfevents";
  EXPECT_EQ(read_error({path}, "vector"),
            "'" + path + "': tag 'vector' at step 0 is not a scalar: a tensor of 3 values");
  EXPECT_EQ(read_error({path}, "note"), "'" + path + "': tag 'note' at step 0 is not a scalar: text");
  EXPECT_EQ(read_error({path}, "lr"), "'" + path + "': no scalar tag 'lr'; its scalar tags: double_content, "
                                      "double_val, float_content, float_val, simple");
  const auto files = tfevents_files_in(kGolden + "/restarted");
  EXPECT_EQ(read_error(files, "train/lr"),
            "'" + kGolden + "/restarted' (2 event files): no scalar tag 'train/lr'; its scalar tags: loss, lr");
}

TEST(TfEventsFile, ADamagedRecordIsNamedByItsFileAndByte) {
  const std::string golden = read_text(kGolden + "/forms.tfevents");
  const auto records = records_of(kGolden + "/forms.tfevents");
  const size_t third = 2 * 16 + records[0].size() + records[1].size();  // where the third record begins
  std::string data_flipped = golden;
  data_flipped[third + 12 + 3] ^= 0x10;
  const auto path = write_bytes("damaged_data.tfevents", data_flipped);
  EXPECT_EQ(read_error({path}, "simple"), "'" + path + "': the record at byte " + std::to_string(third) +
                                              " is damaged (the checksum of its " + std::to_string(records[2].size()) +
                                              " bytes of data does not match)");
  std::string length_flipped = golden;
  length_flipped[third + 1] ^= 0x01;
  const auto other = write_bytes("damaged_length.tfevents", length_flipped);
  EXPECT_EQ(read_error({other}, "simple"),
            "'" + other + "': the record at byte " + std::to_string(third) +
                " is damaged (the checksum of its length does not match: not an event file, or a damaged one)");
  // A header whose checksum holds but whose length runs past the file (2^62 bytes) is a record the file ends inside:
  // the rows before it read, and nothing that long is allocated.
  unsigned char huge[8] = {0, 0, 0, 0, 0, 0, 0, 0x40};
  std::string huge_header(reinterpret_cast<const char*>(huge), 8);
  const uint32_t huge_crc = masked_crc32c(huge, 8);
  for (int i = 0; i < 4; ++i) huge_header.push_back(static_cast<char>((huge_crc >> (8 * i)) & 0xFFu));
  const auto cut = write_bytes("huge_length.tfevents", golden.substr(0, third) + huge_header + std::string(64, 'x'));
  EXPECT_EQ(read_tfevents_series({cut}, "simple").values, std::vector<double>{0.25});
  // A record whose checksums hold but whose data is no Event: named by its byte, with what is wrong.
  const auto bad_event = write_bytes("bad_event.tfevents", golden.substr(0, third) + tfrecord("\x2a\x05\x0a\x03"));
  EXPECT_EQ(read_error({bad_event}, "simple"), "'" + bad_event + "': the event at byte " + std::to_string(third) +
                                                   " is not a TensorBoard event (field 5 runs past the end of its "
                                                   "message)");
}

TEST(TfEventsFile, AFileCutInsideARecordIsReadUpToIt) {
  // A writer killed mid-write leaves part of a record: every cut reads the whole rows before it, as TensorBoard does.
  const std::string golden = read_text(tfevents_files_in(kGolden + "/hf_cosine").front());
  const Series whole = read_series_file(kGolden + "/hf_cosine", "train/learning_rate", "");
  size_t last_rows = 0;
  for (size_t cut = 0; cut <= golden.size(); ++cut) {
    const auto dir = "cut/" + std::to_string(cut);
    const auto path = write_bytes(dir + "/events.out.tfevents.1.host", golden.substr(0, cut));
    Series s;
    try {
      s = read_tfevents_series({path}, "train/learning_rate");
    } catch (const SeriesFileError& e) {
      ASSERT_NE(std::string(e.what()).find("no scalar tag 'train/learning_rate'"), std::string::npos) << cut;
      ASSERT_EQ(last_rows, 0u) << cut;
      continue;
    }
    ASSERT_GE(s.steps.size(), last_rows) << cut;
    last_rows = s.steps.size();
    ASSERT_EQ(s.steps, std::vector<double>(whole.steps.begin(), whole.steps.begin() + static_cast<long>(last_rows)));
    ASSERT_EQ(s.values, std::vector<double>(whole.values.begin(), whole.values.begin() + static_cast<long>(last_rows)));
    testing::remove_tree(testing::scratch_dir() / dir);
  }
  EXPECT_EQ(last_rows, whole.steps.size());
}

TEST(TfEventsFile, EveryMutatedEventIsReadOrRefusedByName) {
  // Each byte of each event set to other values, its checksums made to hold: the decoder meets every malformed
  // message there is in these files, and either reads a series or throws SeriesFileError, never more.
  const auto records = records_of(kGolden + "/forms.tfevents");
  size_t read = 0, refused = 0;
  for (size_t r = 0; r < records.size(); ++r) {
    for (size_t at = 0; at < records[r].size(); ++at) {
      for (const int value : {0x00, 0x7F, 0x80, 0xFF, 0x0A, 0x12}) {
        std::string bytes;
        for (size_t k = 0; k < records.size(); ++k) {
          std::string data = records[k];
          if (k == r) data[at] = static_cast<char>(value);
          bytes += tfrecord(data);
        }
        const auto path = write_bytes("mutated.tfevents", bytes);
        try {
          read_tfevents_series({path}, "simple");
          ++read;
        } catch (const SeriesFileError&) {
          ++refused;
        }
      }
    }
  }
  EXPECT_GT(read, 0u);
  EXPECT_GT(refused, 0u);
}

TEST(TfEventsFile, DirectoriesNameTheirEventFilesAndTheRunsBelowThem) {
  // events.out.tfevents.* by name; another name holding "tfevents" only where its content is an event file.
  const auto dir = testing::scratch_dir() / "logdir";
  const std::string golden = read_text(kGolden + "/forms.tfevents");
  write_bytes("logdir/run_b/events.out.tfevents.2.host", golden);
  write_bytes("logdir/run_b/events.out.tfevents.1.host", golden);
  write_bytes("logdir/run_b/make_tfevents.py", "print('not an event file')\n");
  write_bytes("logdir/run_b/copy.tfevents", golden);
  write_bytes("logdir/run_a/events.out.tfevents.9.host", golden);
  write_bytes("logdir/notes/readme.txt", "no events\n");
  // A run two levels down (TensorBoard finds runs at any depth), and a link inside a run back up to logdir.
  write_bytes("logdir/group/run_c/events.out.tfevents.3.host", golden);
  ASSERT_EQ(::symlink("..", (dir / "run_a/up").c_str()), 0);
  EXPECT_EQ(tfevents_files_in((dir / "run_b").string()),
            (std::vector<std::string>{(dir / "run_b/copy.tfevents").string(),
                                      (dir / "run_b/events.out.tfevents.1.host").string(),
                                      (dir / "run_b/events.out.tfevents.2.host").string()}));
  EXPECT_TRUE(tfevents_files_in(dir.string()).empty());
  std::vector<std::string> runs;
  for (const TfEventsRun& run : tfevents_runs_below(dir.string())) {
    runs.push_back(run.path);
    EXPECT_EQ(run.files, tfevents_files_in(run.path));
  }
  EXPECT_EQ(runs, (std::vector<std::string>{(dir / "group/run_c").string(), (dir / "run_a").string(),
                                            (dir / "run_b").string()}));
  try {
    read_series_file(dir.string(), "/train/lr", "");
    FAIL() << "a log directory of runs read as one";
  } catch (const SeriesFileError& e) {
    EXPECT_EQ(std::string(e.what()), "'" + dir.string() +
                                         "' is a directory without a run log (log.h5), event files, a "
                                         "trainer_state.json, an MLflow run's metrics or store (mlflow.db) or a "
                                         "W&B run log (.wandb); the TensorBoard runs below it: " +
                                         (dir / "group/run_c").string() + ", " + (dir / "run_a").string() + ", " +
                                         (dir / "run_b").string() + ": name one");
  }
  // Three files of the same events: each later file's rows replace the earlier's.
  const Series s = read_series_file((dir / "run_b").string(), "simple", "");
  EXPECT_EQ(s.steps.size(), 5u);
  EXPECT_EQ(s.replaced, 10u);
}

}  // namespace
}  // namespace lrkit::schedules
