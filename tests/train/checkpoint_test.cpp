// Checkpoints and exact resume on a tiny model.
#include "lrkit/train/checkpoint.hpp"

#include <gtest/gtest.h>
#include <zlib.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "checkpoint_file.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/trainer.hpp"
#include "test_files.hpp"

namespace lrkit::train {
namespace {

namespace fs = std::filesystem;

TrainConfig resumable_config(const std::string& name) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "And God said, Let there be light: and there was light " + std::to_string(i) + ".\n";
  TrainConfig c;
  c.model = {256, 16, 1, 2, 16, 0.1};  // dropout on: the resumed run must draw the same masks
  c.data.path = lrkit::testing::write_text("resume_corpus.txt", text);
  c.train.steps = 20;
  c.train.batch = 4;
  c.train.log_every = 5;
  c.train.threads = 1;
  c.eval.every = 5;
  c.eval.batches = 1;
  c.checkpoint.every = 10;
  c.checkpoint.keep = 5;
  c.log.flush_every = 3;
  c.schedule = "wsd(peak=1e-2, warmup=2, decay=5)";
  c.out = (lrkit::testing::scratch_dir() / name).string();
  lrkit::testing::remove_tree(c.out);
  return c;
}

TEST(Checkpoint, ResumedRunReproducesTheUninterruptedLossesBitForBit) {
  std::ostringstream out;
  const TrainConfig c = resumable_config("resume_run");
  const auto full = run_training(c, out);
  const auto full_log = lrkit::h5::read_series(full.log_path, "/train/loss");
  ASSERT_EQ(full.losses.size(), 20u);
  ASSERT_TRUE(fs::exists(c.out + "/checkpoints/step_0000000010.pt"));

  // Killed while saving step 20: its file is still the save's temporary, as large as a checkpoint and never read.
  // --resume auto continues from step 10 and removes it; a file of another name stays.
  const std::string partial = c.out + "/checkpoints/.step_0000000020.pt.tmp";
  fs::rename(c.out + "/checkpoints/step_0000000020.pt", partial);
  const auto partial_bytes = static_cast<double>(fs::file_size(partial));
  lrkit::testing::write_text("resume_run/checkpoints/.notes.tmp", "the user's\n");
  TrainConfig again = c;
  again.resume = "auto";
  std::ostringstream resumed_out;
  const auto resumed = run_training(again, resumed_out);
  EXPECT_NE(resumed_out.str().find("\nremoved 1 partial checkpoint file(s) of a save a kill cut short (" +
                                   bytes_text(partial_bytes) + "): " + partial + "\n"),
            std::string::npos)
      << resumed_out.str();
  EXPECT_TRUE(fs::exists(c.out + "/checkpoints/.notes.tmp"));
  EXPECT_FALSE(fs::exists(partial));
  ASSERT_EQ(resumed.losses.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(resumed.losses[i], full.losses[10 + i]) << "step " << 10 + i;
  EXPECT_EQ(lrkit::h5::read_series(full.log_path, "/train/loss"), full_log);  // the log continues seamlessly
  EXPECT_EQ(lrkit::h5::read_series(full.log_path, "/eval/heldout/step"), (std::vector<double>{5, 10, 15, 20}));
  EXPECT_EQ(resumed.final_eval_loss, full.final_eval_loss);
}

TEST(Checkpoint, MilestonesAreKeptAndEvaluated) {
  std::ostringstream out;
  TrainConfig c = resumable_config("milestones");
  c.checkpoint.every = 2;
  c.checkpoint.keep = 1;
  c.checkpoint.at = "3, 7";
  c.eval.every = 0;
  run_training(c, out);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(c.out + "/checkpoints")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"step_0000000003.pt", "step_0000000007.pt", "step_0000000020.pt"}));
  EXPECT_EQ(lrkit::h5::read_series(c.out + "/log.h5", "/eval/heldout/step"), (std::vector<double>{3, 7, 20}));
  c.checkpoint.at = "7, 3";
  EXPECT_THROW(run_training(c, out), std::invalid_argument);
  c.checkpoint.at = "21";
  EXPECT_THROW(run_training(c, out), std::invalid_argument);
}

TEST(Checkpoint, ABranchContinuesAMainRunBitForBitAndResumesInPlace) {
  // Main run: the schedule never decays; the branch forks at step 12 and decays to step 20.
  std::ostringstream out;
  TrainConfig separate = resumable_config("branch_separate");
  separate.schedule = "wsd(peak=1e-2, warmup=2, decay=8, shape=linear)";
  TrainConfig main = resumable_config("branch_main");
  main.schedule = "wsd(peak=1e-2, warmup=2, decay=8, shape=linear, total=1000)";
  main.train.steps = 12;
  main.checkpoint.at = "12";
  TrainConfig branch = separate;
  branch.out = (lrkit::testing::scratch_dir() / "branch_fork").string();
  lrkit::testing::remove_tree(branch.out);
  branch.branch_from = main.out + "/checkpoints/step_0000000012.pt";
  branch.resume = "auto";
  branch.checkpoint.every = 4;  // 16 and 20
  const auto whole = run_training(separate, out);
  run_training(main, out);
  const auto forked = run_training(branch, out);
  ASSERT_EQ(forked.losses.size(), 8u);
  for (size_t i = 0; i < 8; ++i) EXPECT_EQ(forked.losses[i], whole.losses[12 + i]) << "step " << 12 + i;
  EXPECT_EQ(forked.final_eval_loss, whole.final_eval_loss);
  EXPECT_EQ(lrkit::h5::read_series(forked.log_path, "/train/step").front(), 12.0) << "the branch's log starts at its fork";
  // Interrupted branch: its own checkpoint wins over the fork; the log keeps its rows before it.
  fs::remove(branch.out + "/checkpoints/step_0000000020.pt");
  const auto resumed = run_training(branch, out);
  EXPECT_NE(out.str().find("resumed from " + branch.out), std::string::npos) << out.str();
  ASSERT_EQ(resumed.losses.size(), 4u);  // from its step-16 checkpoint
  for (size_t i = 0; i < 4; ++i) EXPECT_EQ(resumed.losses[i], whole.losses[16 + i]);
  const auto steps = lrkit::h5::read_series(forked.log_path, "/train/step");
  ASSERT_EQ(steps.size(), 8u);
  EXPECT_EQ(steps.back(), 19.0);
}

TEST(Checkpoint, KeepsOnlyTheNewestAndRejectsBadFiles) {
  std::ostringstream out;
  TrainConfig c = resumable_config("keep_run");
  c.checkpoint.every = 4;
  c.checkpoint.keep = 2;
  run_training(c, out);
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(c.out + "/checkpoints")) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"step_0000000016.pt", "step_0000000020.pt"}));

  Gpt model(c.model);
  const auto newest = *latest_checkpoint(c.out);
  EXPECT_EQ(load_checkpoint(newest, model, nullptr).step, 20);
  fs::copy_file(newest, c.out + "/truncated.pt");
  fs::resize_file(c.out + "/truncated.pt", fs::file_size(newest) / 2);
  EXPECT_THROW(load_checkpoint(c.out + "/truncated.pt", model, nullptr), CheckpointError);
  EXPECT_THROW(load_checkpoint(lrkit::testing::write_text("garbage.pt", "not a checkpoint"), model, nullptr),
               CheckpointError);
  EXPECT_THROW(load_checkpoint(c.out + "/missing.pt", model, nullptr), CheckpointError);

  TrainConfig other = c;
  other.resume = newest;
  other.train.steps = 30;
  other.schedule = "cosine(peak=1e-2)";
  EXPECT_THROW(run_training(other, out), std::invalid_argument);  // a different schedule cannot resume exactly
}

// Inverts 64 bytes in the middle of a copy of `file` (or of the file itself); returns the copy.
std::string damaged_copy(const std::string& file, const std::string& copy) {
  if (copy != file) fs::copy_file(file, copy, fs::copy_options::overwrite_existing);
  std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
  const auto middle = static_cast<std::streamoff>(fs::file_size(copy) / 2);
  std::string bytes(64, '\0');
  f.seekg(middle);
  f.read(bytes.data(), 64);
  for (char& b : bytes) b = static_cast<char>(~b);
  f.seekp(middle);
  f.write(bytes.data(), 64);
  return copy;
}

std::string thrown_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(nothing thrown)";
}

TEST(Checkpoint, AFlippedByteIsRefusedOnResumeInitAndBranchAndTheLogRecordsChecksums) {
  std::ostringstream out;
  TrainConfig c = resumable_config("checksum_run");
  const auto run = run_training(c, out);
  const auto crcs = lrkit::h5::read_series(run.log_path, "/checkpoints/crc32");
  ASSERT_EQ(lrkit::h5::read_series(run.log_path, "/checkpoints/step"), (std::vector<double>{10, 20}));
  Gpt model(c.model);
  EXPECT_EQ(crcs.back(), static_cast<double>(load_checkpoint(run.checkpoint, model, nullptr).crc32));
  EXPECT_EQ(lrkit::h5::read_string_attributes(run.log_path, "/start").at("kind"), "fresh");

  // A good start is recorded: the file and its checksum.
  TrainConfig good = resumable_config("checksum_good_init");
  good.init_from = run.checkpoint;
  good.train.steps = 2;
  good.schedule = "constant(1e-4)";
  const auto started = run_training(good, out);
  const auto start = lrkit::h5::read_string_attributes(started.log_path, "/start");
  EXPECT_EQ(start.at("kind"), "init");
  EXPECT_EQ(start.at("checkpoint"), run.checkpoint);
  EXPECT_EQ(start.at("checksum"), format_checksum(static_cast<uint32_t>(crcs.back())));

  const std::string ten = c.out + "/checkpoints/step_0000000010.pt";
  const std::string bad = damaged_copy(ten, c.out + "/damaged.pt");
  const auto refuses = [&](TrainConfig attempt) {
    const std::string message = thrown_message([&] { run_training(attempt, out); });
    EXPECT_NE(message.find("checkpoint '" + bad + "' is damaged"), std::string::npos) << message;
    EXPECT_NE(message.find("crc32:"), std::string::npos) << message;
  };
  TrainConfig resume = c;
  resume.resume = bad;
  refuses(resume);
  TrainConfig init = resumable_config("checksum_init");
  init.init_from = bad;
  refuses(init);
  TrainConfig branch = resumable_config("checksum_branch");
  branch.branch_from = bad;
  refuses(branch);
  damaged_copy(ten, ten);  // --resume auto finds the damaged one too
  fs::remove(c.out + "/checkpoints/step_0000000020.pt");
  TrainConfig automatic = c;
  automatic.resume = "auto";
  EXPECT_THROW(run_training(automatic, out), CheckpointError);

}

TEST(Checkpoint, InitFromStartsANewRunFromTheWeights) {
  std::ostringstream out;
  TrainConfig c = resumable_config("init_source");
  const auto source = run_training(c, out);
  TrainConfig fresh = resumable_config("init_target");
  fresh.init_from = source.checkpoint;
  fresh.train.steps = 3;
  fresh.schedule = "constant(1e-4)";
  const auto continued = run_training(fresh, out);
  TrainConfig scratch = resumable_config("init_scratch");
  scratch.train.steps = 3;
  scratch.schedule = "constant(1e-4)";
  const auto from_scratch = run_training(scratch, out);
  EXPECT_LT(continued.losses[0], from_scratch.losses[0] - 0.5);  // it starts where the source ended
}

// Module::save, plus each attention layer's [context, context] buffer 'mask' as builds before the explicit attention
// built its causal mask per call saved it.
void save_with_attention_masks(const torch::nn::Module& module, torch::serialize::OutputArchive& archive, int64_t context) {
  for (const auto& parameter : module.named_parameters(false)) archive.write(parameter.key(), parameter.value());
  for (const auto& buffer : module.named_buffers(false)) archive.write(buffer.key(), buffer.value(), true);
  if (dynamic_cast<const CausalSelfAttentionImpl*>(&module))
    archive.write("mask", torch::ones({context, context}, torch::kBool).tril().logical_not(), true);
  for (const auto& child : module.named_children()) {
    torch::serialize::OutputArchive child_archive(archive.compilation_unit());
    save_with_attention_masks(*child.value(), child_archive, context);
    archive.write(child.key(), child_archive);
  }
}

// A checkpoint as builds before the model-shape and optim.name records wrote it (format 2 without them).
std::string write_unrecorded_checkpoint(const std::string& dir, Gpt& model, torch::optim::Optimizer* optimizer,
                                        int64_t step, const std::string& schedule_spec, bool attention_masks = false) {
  torch::serialize::OutputArchive archive, model_archive;
  if (attention_masks) {
    save_with_attention_masks(*model, model_archive, model->config().context);
  } else {
    model->save(model_archive);
  }
  archive.write("model", model_archive);
  if (optimizer) {
    torch::serialize::OutputArchive optimizer_archive;
    optimizer->save(optimizer_archive);
    archive.write("optimizer", optimizer_archive);
    archive.write("rng_cpu", at::detail::getDefaultCPUGenerator().get_state());
  }
  archive.write("format", c10::IValue(int64_t{2}));
  archive.write("step", c10::IValue(step));
  archive.write("schedule_spec", c10::IValue(schedule_spec));
  write_checkpoint_file(dir, "unrecorded.pt", [&](const ChunkWriter& write) { archive.save_to(write); });
  return dir + "/unrecorded.pt";
}

// LibTorch's Module::load put a saved tensor of any shape in place: a resume with another model.width
// crashed in the first forward pass with a LayerNorm stack trace, another model.heads trained on silently.
TEST(Checkpoint, AnotherModelShapeIsRefusedOnResumeInitAndBranchNamingTheKeys) {
  std::ostringstream out;
  TrainConfig c = resumable_config("shape_run");  // layers 1, heads 2, width 16, context 16
  c.train.steps = 8;
  c.schedule = "constant(1e-2, warmup=2)";  // the same rates over 12 steps: the resume below is refused for its shape only
  const auto run = run_training(c, out);
  const auto refusal = [&](TrainConfig attempt) { return thrown_message([&] { run_training(attempt, out); }); };
  TrainConfig resume = c;
  resume.resume = "auto";
  resume.train.steps = 12;
  resume.model.width = 32;
  EXPECT_EQ(refusal(resume), "checkpoint '" + run.checkpoint + "' holds another model: model.width = 16 there, 32 in this run "
                             "(a checkpoint resumes, branches or initializes the model shape it was saved with)");
  TrainConfig init = resumable_config("shape_init");
  init.init_from = run.checkpoint;
  init.model.heads = 4;  // no tensor changes shape: only the recorded shape tells
  EXPECT_NE(refusal(init).find("model.heads = 2 there, 4 in this run"), std::string::npos) << refusal(init);
  TrainConfig branch = resumable_config("shape_branch");
  branch.branch_from = run.checkpoint;
  branch.train.steps = 12;
  branch.model.layers = 3;
  branch.model.context = 8;
  EXPECT_NE(refusal(branch).find("model.layers = 1 there, 3 in this run, model.context = 16 there, 8 in this run"),
            std::string::npos) << refusal(branch);
  EXPECT_FALSE(fs::exists(branch.out + "/log.h5")) << "refused before the run log is started";

  // A checkpoint written before the shape was recorded: compared tensor by tensor.
  Gpt saved(c.model);
  const std::string unrecorded = write_unrecorded_checkpoint(c.out, saved, nullptr, 8, c.schedule);
  GptConfig wider = c.model, deeper = c.model;
  wider.width = 32;
  deeper.layers = 2;
  Gpt wider_model(wider), deeper_model(deeper), same_model(c.model);
  EXPECT_NE(thrown_message([&] { load_checkpoint(unrecorded, wider_model, nullptr); })
                .find("another model: 'token_embedding.weight' is [256, 16] there, [256, 32] in this run"),
            std::string::npos);
  EXPECT_NE(thrown_message([&] { load_checkpoint(unrecorded, deeper_model, nullptr); })
                .find("another model: it has no module 'blocks.1'"),
            std::string::npos);
  EXPECT_EQ(load_checkpoint(unrecorded, same_model, nullptr).step, 8);
  EXPECT_TRUE(torch::equal(same_model->parameters().front(), saved->parameters().front()));
  write_unrecorded_checkpoint(c.out, deeper_model, nullptr, 8, c.schedule);  // Module::load skipped what it did not ask for
  EXPECT_NE(thrown_message([&] { load_checkpoint(unrecorded, same_model, nullptr); })
                .find("another model: it has 'blocks.1', which this run's model lacks"),
            std::string::npos)
      << thrown_message([&] { load_checkpoint(unrecorded, same_model, nullptr); });
}

// The model holds no [context, context] buffer (it cost context^2 bytes per layer in memory and in every checkpoint);
// checkpoints that saved one per attention layer still load.
TEST(Checkpoint, CheckpointsWithTheFormerPerLayerAttentionMasksStillLoad) {
  GptConfig shape{256, 16, 2, 2, 16, 0.0};
  Gpt saved(shape), loaded(shape);
  EXPECT_TRUE(saved->named_buffers().is_empty());
  const auto dir = (lrkit::testing::scratch_dir() / "attention_masks").string();
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir);
  const std::string path = write_unrecorded_checkpoint(dir, saved, nullptr, 3, "constant(1e-3)", true);
  EXPECT_EQ(load_checkpoint(path, loaded, nullptr).step, 3);
  for (const auto& p : saved->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), loaded->named_parameters()[p.key()])) << p.key();
}

// The header's payload size is written zero-padded to 20 digits (the header is written last, after the streamed
// payload, so its length must not depend on the size); checkpoints written before, without the padding, still read.
TEST(Checkpoint, TheStreamedFileReadsAndSoDoesTheUnpaddedHeaderOfEarlierVersions) {
  GptConfig shape{256, 16, 1, 2, 16, 0.0};
  Gpt saved(shape), loaded(shape);
  const auto dir = (lrkit::testing::scratch_dir() / "header_forms").string();
  lrkit::testing::remove_tree(dir);
  fs::create_directories(dir);
  const std::string path = write_unrecorded_checkpoint(dir, saved, nullptr, 5, "constant(1e-3)");
  const std::string file = lrkit::read_text(path);
  const auto newline = file.find('\n');
  const std::string payload = file.substr(newline + 1);
  const std::string header = file.substr(0, newline);
  EXPECT_EQ(header.substr(header.find(" bytes=") + 7), std::string(20 - std::to_string(payload.size()).size(), '0') +
                                                          std::to_string(payload.size()));
  const auto crc = read_checkpoint_info(path).crc32;
  const std::string earlier = header.substr(0, header.find(" bytes=")) + " bytes=" + std::to_string(payload.size()) + "\n";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << earlier << payload;
  const auto info = load_checkpoint(path, loaded, nullptr);
  EXPECT_EQ(info.step, 5);
  EXPECT_EQ(info.crc32, crc);
  for (const auto& p : saved->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), loaded->named_parameters()[p.key()])) << p.key();
}

// LibTorch 2.x's archive writer may hand a null buffer for bytes it skips (its file writer seeks over them): they
// are zeros in the payload and in its checksum, also at the payload's end.
TEST(Checkpoint, SkippedPayloadBytesAreZerosInTheFileAndTheChecksum) {
  const auto dir = lrkit::testing::scratch_dir() / "skipped_bytes";
  lrkit::testing::remove_tree(dir);
  const uint32_t crc = write_checkpoint_file(dir, "skips.pt", [](const ChunkWriter& write) {
    EXPECT_EQ(write("abc", 3), 3u);
    EXPECT_EQ(write(nullptr, 5), 5u);
    EXPECT_EQ(write("de", 2), 2u);
    EXPECT_EQ(write(nullptr, 3), 3u);
  });
  const std::string expected("abc\0\0\0\0\0de\0\0\0", 13);
  const CheckpointFile file((dir / "skips.pt").string());
  ASSERT_EQ(file.payload_size(), expected.size());
  std::string payload(expected.size(), 'x');
  EXPECT_EQ(file.read(0, payload.data(), payload.size()), expected.size());
  EXPECT_EQ(payload, expected);
  EXPECT_EQ(file.crc32(), crc);
  EXPECT_EQ(crc, static_cast<uint32_t>(crc32(0L, reinterpret_cast<const Bytef*>(expected.data()), 13)));
  EXPECT_EQ(file.read(10, payload.data(), 8), 3u) << "a read past the end stops at it";
}

TEST(Checkpoint, AResumeWhoseRunLogIsGoneOrEmptiedSaysHowToGoOn) {
  std::ostringstream out;
  TrainConfig c = resumable_config("lost_log_run");
  c.train.steps = 8;
  c.checkpoint.every = 4;
  const auto run = run_training(c, out);
  fs::remove(c.out + "/checkpoints/step_0000000008.pt");
  const std::string four = c.out + "/checkpoints/step_0000000004.pt";
  const std::string way_on = " (a resume continues its run's log; --branch-from " + four +
                             " --out NEW_DIR continues the checkpoint under a new log)";
  TrainConfig resume = c;
  resume.resume = "auto";
  fs::remove(run.log_path);
  EXPECT_EQ(thrown_message([&] { run_training(resume, out); }),
            "cannot continue the run log at step 4: cannot open HDF5 file '" + run.log_path + "': no such file" + way_on);
  std::ofstream(run.log_path).close();  // emptied
  EXPECT_EQ(thrown_message([&] { run_training(resume, out); }),
            "cannot continue the run log at step 4: '" + run.log_path + "' is not an HDF5 file (or is truncated)" + way_on);
  EXPECT_TRUE(fs::exists(four)) << "the checkpoint is kept";
}

// LibTorch read AdamW state into SGD with "INTERNAL ASSERT FAILED ... please report a bug to PyTorch", which
// the trainer reported as a corrupt checkpoint.
TEST(Checkpoint, AnotherOptimizerIsRefusedByName) {
  std::ostringstream out;
  TrainConfig c = resumable_config("optimizer_run");
  c.train.steps = 8;
  c.schedule = "constant(1e-2, warmup=2)";  // the same rates over 12 steps: the resume below is refused for its optimizer only
  const auto run = run_training(c, out);
  TrainConfig resume = c;
  resume.resume = "auto";
  resume.train.steps = 12;
  resume.optim.name = OptimizerName::sgd;
  EXPECT_EQ(thrown_message([&] { run_training(resume, out); }),
            "checkpoint '" + run.checkpoint + "' holds the state of optim.name = adamw, this run's is sgd "
            "(--init-from starts another optimizer from its weights)");
  TrainConfig init = resumable_config("optimizer_init");  // weights only: any optimizer
  init.init_from = run.checkpoint;
  init.train.steps = 2;
  init.schedule = "constant(1e-4)";
  init.optim.name = OptimizerName::sgd;
  EXPECT_EQ(run_training(init, out).losses.size(), 2u);

  // A checkpoint written before the optimizer was recorded: LibTorch's failure is named as this one.
  Gpt model(c.model);
  torch::optim::AdamW adamw(model->parameters(), torch::optim::AdamWOptions(1e-3));
  for (auto& p : model->parameters()) p.mutable_grad() = torch::ones_like(p);
  adamw.step();
  const std::string unrecorded = write_unrecorded_checkpoint(c.out, model, &adamw, 1, c.schedule);
  torch::optim::SGD sgd(model->parameters(), torch::optim::SGDOptions(1e-3).momentum(0.9));
  EXPECT_NE(thrown_message([&] { load_checkpoint(unrecorded, model, &sgd); })
                .find("holds optimizer state this run's sgd cannot read (another optim.name?)"),
            std::string::npos);
  torch::optim::AdamW same(model->parameters(), torch::optim::AdamWOptions(1e-3));
  EXPECT_EQ(load_checkpoint(unrecorded, model, &same).step, 1);
}

TEST(Checkpoint, NonFiniteLossStopsByDefaultAndSkippingStopsAfterTheSkipLimit) {
  std::ostringstream out;
  TrainConfig c = resumable_config("nonfinite_run");
  c.schedule = "constant(1e30)";  // diverges within a few steps, and the weights stay non-finite-making after that
  c.optim.clip = 0;
  const auto log = run_log_path(c.out);
  try {
    run_training(c, out);
    FAIL() << "expected a non-finite loss";
  } catch (const DivergedError& e) {
    EXPECT_NE(std::string(e.what()).find("non-finite training loss"), std::string::npos) << e.what();
  }
  // Skipped updates leave the weights as they are: twelve in a row end the run, logged up to the twelfth. The
  // periodic checkpoint due in between (step 10) is not written: it would hold the weights that broke the loss.
  lrkit::testing::remove_tree(c.out);
  c.train.nonfinite = "skip";
  c.train.skip_limit = 12;
  std::string message;
  try {
    run_training(c, out);
  } catch (const DivergedError& e) {
    message = e.what();
  }
  const auto loss = lrkit::h5::read_series(log, "/train/loss");
  ASSERT_GE(loss.size(), 13u);
  ASSERT_LT(loss.size(), 20u);
  for (size_t i = 0; i < loss.size(); ++i) EXPECT_EQ(std::isfinite(loss[i]), i + 12 < loss.size()) << i;
  EXPECT_NE(message.find("non-finite training loss in 12 steps in a row (steps " + std::to_string(loss.size() - 12) + ".." +
                         std::to_string(loss.size() - 1) + ", logged; updates skipped); last good checkpoint: none"),
            std::string::npos)
      << message;
  EXPECT_FALSE(fs::exists(checkpoint_path(c.out, 10)));
  // No limit: every update after the divergence is skipped, to the end; the evaluation after it says the run diverged.
  lrkit::testing::remove_tree(c.out);
  c.train.skip_limit = 0;
  message.clear();
  try {
    run_training(c, out);
  } catch (const DivergedError& e) {
    message = e.what();
  }
  EXPECT_EQ(message.rfind("non-finite heldout loss ", 0), 0u) << message;
  EXPECT_EQ(lrkit::h5::read_series(log, "/train/loss").size(), 20u);
  EXPECT_TRUE(fs::exists(checkpoint_path(c.out, 20)));  // the last step's is written, as sweeps expect
  // A branch that diverges before its first checkpoint names the one it started from.
  TrainConfig source = resumable_config("nonfinite_source");
  source.train.steps = 10;
  run_training(source, out);
  TrainConfig branch = resumable_config("nonfinite_branch");
  branch.branch_from = checkpoint_path(source.out, 10);
  branch.schedule = c.schedule;
  branch.optim.clip = 0;
  try {
    run_training(branch, out);
    FAIL() << "expected a non-finite loss";
  } catch (const DivergedError& e) {
    EXPECT_NE(std::string(e.what()).find("last good checkpoint: " + checkpoint_path(source.out, 10) + " "), std::string::npos) << e.what();
  }
}

// The last step's loss is finite when its own update is what breaks the weights: the evaluation after it says so.
TEST(Checkpoint, ANonFiniteLossAtTheEvaluationAfterTheLastStepIsADivergence) {
  std::ostringstream out;
  TrainConfig c = resumable_config("last_update_broke");
  c.train.steps = 1;
  c.schedule = "constant(1e30)";  // one AdamW update moves every weight by about 1e30
  c.optim.clip = 0;
  std::string message;
  try {
    run_training(c, out);
  } catch (const DivergedError& e) {
    message = e.what();
  }
  const auto log = run_log_path(c.out);
  const auto loss = lrkit::h5::read_series(log, "/train/loss");
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_TRUE(std::isfinite(loss[0]));
  const auto heldout = lrkit::h5::read_series(log, "/eval/heldout/loss");
  ASSERT_EQ(heldout.size(), 1u);
  EXPECT_FALSE(std::isfinite(heldout[0]));
  EXPECT_EQ(message, "non-finite heldout loss " + format_number(heldout[0]) +
                         " at the evaluation after the last step (1, logged): the last updates broke the model; checkpoint " +
                         checkpoint_path(c.out, 1) + " holds those weights");
  EXPECT_TRUE(fs::exists(checkpoint_path(c.out, 1)));
  // A finite one is not.
  lrkit::testing::remove_tree(c.out);
  c.schedule = "constant(1e-3)";
  EXPECT_NO_THROW(run_training(c, out));
}

// A checkpoint written while updates are being skipped (a milestone, the last step) carries the streak: resumed
// from it, the run stops at the step the uninterrupted run would, and names no checkpoint of the streak as good.
TEST(Checkpoint, AResumeContinuesTheSkipStreakOfItsCheckpoint) {
  std::ostringstream out;
  TrainConfig c = resumable_config("streak_run");
  c.schedule = "constant(1e30)";
  c.optim.clip = 0;
  c.train.nonfinite = "skip";
  c.train.skip_limit = 0;
  c.checkpoint.at = "15";
  EXPECT_THROW(run_training(c, out), DivergedError);  // at the end: its evaluation's loss is non-finite
  const auto loss = lrkit::h5::read_series(run_log_path(c.out), "/train/loss");
  ASSERT_EQ(loss.size(), 20u);
  int64_t streak = 0;
  for (size_t i = 0; i < 15; ++i) streak = std::isfinite(loss[i]) ? 0 : streak + 1;
  ASSERT_GT(streak, 2) << "the run must be skipping by step 15";
  EXPECT_EQ(read_checkpoint_info(checkpoint_path(c.out, 15)).loop.skipped_in_a_row, streak);
  EXPECT_EQ(read_checkpoint_info(checkpoint_path(c.out, 20)).loop.skipped_in_a_row, streak + 5);

  TrainConfig resumed = c;
  resumed.resume = checkpoint_path(c.out, 15);
  resumed.train.skip_limit = streak + 2;  // two more skipped updates: steps 15 and 16
  std::string message;
  try {
    run_training(resumed, out);
  } catch (const DivergedError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("non-finite training loss in " + std::to_string(streak + 2) + " steps in a row (steps " +
                         std::to_string(15 - streak) + "..16, logged; updates skipped); last good checkpoint: none"),
            std::string::npos)
      << message;
  EXPECT_EQ(lrkit::h5::read_series(run_log_path(c.out), "/train/loss").size(), 17u);
  // A limit the streak already passed stops at the first step.
  resumed.train.skip_limit = 2;
  resumed.resume = checkpoint_path(c.out, 15);
  EXPECT_THROW(run_training(resumed, out), DivergedError);
  EXPECT_EQ(lrkit::h5::read_series(run_log_path(c.out), "/train/loss").size(), 16u);
}

}  // namespace
}  // namespace lrkit::train
