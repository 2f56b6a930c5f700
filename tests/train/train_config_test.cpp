// The configuration schema: one declaration per key drives parsing, --help,
// validation and the run log's record of every effective value.
#include "lrkit/train/train_config.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "tiny_config.hpp"

namespace lrkit::train {
namespace {

std::string parse_error(const std::vector<std::string>& args) {
  TrainConfig c;
  std::string help;
  try {
    parse_train_config(args, c, help);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(TrainConfigSchema, RunLogRecordsEveryKeyAndTheRecordRebuildsTheConfig) {
  auto c = tiny_config();
  c.out = (lrkit::testing::scratch_dir() / "schema_run").string();
  c.train.steps = 6;
  c.train.seed = 77;
  c.optim.beta2 = 0.99;
  c.optim.name = OptimizerName::sgd;
  c.model.dropout = 0.125;
  c.hdet.enabled = true;
  c.hdet.replicas_per_rank = 2;
  c.hdet.controller.alpha = 0.2;
  c.hdet.controller.sync_every = 3;
  c.hdet.dropout_alpha = 0.1;
  c.checkpoint.at = "2, 4";
  std::ostringstream progress;
  run_training(c, progress);

  const auto recorded = h5::read_string_attributes(run_log_path(c.out), "/config");
  std::vector<std::string> args;
  for (const auto& key : train_config_schema()) {
    ASSERT_EQ(recorded.count(key.name), 1u) << key.name << " is not in the run log";
    EXPECT_EQ(recorded.at(key.name), key.get(c)) << key.name;
    args.push_back("--" + key.name + "=" + recorded.at(key.name));
  }
  EXPECT_EQ(recorded.size(), train_config_schema().size());
  TrainConfig rebuilt;
  std::string help;
  ASSERT_TRUE(parse_train_config(args, rebuilt, help));
  EXPECT_EQ(config_values(rebuilt), config_values(c));
  EXPECT_EQ(rebuilt.optim.name, OptimizerName::sgd);
  EXPECT_EQ(rebuilt.hdet.controller.alpha, 0.2);
  EXPECT_EQ(rebuilt.model.dropout, 0.125);
  // The HDET group's summary attributes print numbers as /config does (std::to_string gave 0.200000).
  EXPECT_EQ(h5::read_string_attributes(run_log_path(c.out), "/hdet").at("alpha"), "0.2");
}

TEST(TrainConfigSchema, ChoicesAreEnumsParsedWhenSetAndRefusedByName) {
  TrainConfig c;
  std::string help;
  ASSERT_TRUE(parse_train_config({"--hdet.mode=local", "--diagnostics.pairwise=sketch", "--train.precision=bf16"}, c, help));
  EXPECT_EQ(c.hdet.mode, HdetMode::local);
  EXPECT_EQ(c.diagnostics.pairwise, Pairwise::sketch);
  EXPECT_EQ(c.train.precision, Precision::bf16);
  EXPECT_EQ(parse_error({"--optim.name=adam"}), "optim.name must be adamw or sgd (got 'adam')");
  EXPECT_EQ(parse_error({"--diagnostics.pairwise=all"}), "diagnostics.pairwise must be off, exact or sketch (got 'all')");
  EXPECT_EQ(parse_error({"--model.fused_norm=yes"}), "model.fused_norm must be off, on or auto (got 'yes')");
  EXPECT_EQ(parse_error({"--model.fused_norm=on"}),
            "model.fused_norm=on needs train.device=cuda (the fused kernel is CUDA's; auto uses it where it can)");
  EXPECT_EQ(parse_error({"--model.fused_norm=auto"}), "no error") << "auto runs the composite where there is no kernel";
  c = TrainConfig();
  c.train.device = "tpu";  // kept as text, refused by validation
  try {
    c.validate();
    FAIL() << "accepted train.device=tpu";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "train.device must be cpu or cuda (got 'tpu')");
  }
}

// Windows editors save UTF-8 with a byte-order mark: it made the first '[section]' an invalid line.
TEST(TrainConfigSchema, AConfigFileWithAByteOrderMarkReadsAsWithout) {
  const auto path = lrkit::testing::write_text("bom.cfg", "\xEF\xBB\xBF[train]\nsteps = 7\n");
  TrainConfig c;
  std::string help;
  ASSERT_TRUE(parse_train_config({"--config", path}, c, help));
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_EQ(c.config_text, "[train]\nsteps = 7\n");
}

// Python's configparser files comment with ';' at a line's start; Boost refused such a line as invalid. The file's
// text is logged as written, comments included.
TEST(TrainConfigSchema, AConfigFileTakesSemicolonCommentLines) {
  const std::string text = "; the run\n[train]\n  ; steps = 9\nsteps = 7\n[optim]\nbeta1 = 1.5\n";
  const auto path = lrkit::testing::write_text("semicolons.cfg", text);
  EXPECT_EQ(parse_error({"--config", path}), "config file '" + path + "' line 6: optim.beta1 must be in [0, 1) (got 1.5)");
  TrainConfig c;
  std::string help;
  ASSERT_TRUE(parse_train_config({"--config", path, "--optim.beta1=0.9"}, c, help));
  EXPECT_EQ(c.train.steps, 7);
  EXPECT_EQ(c.config_text, text);
  EXPECT_EQ(c.keys_from_config_file, std::vector<std::string>{"train.steps"});
}

TEST(TrainConfigSchema, ValuesOutsideTheirRuleAreOneLineErrors) {
  EXPECT_EQ(parse_error({"--optim.beta1=nan"}), "optim.beta1 must be a finite number (got 'nan')");
  EXPECT_EQ(parse_error({"--optim.beta2=2"}), "optim.beta2 must be in [0, 1) (got 2)");
  EXPECT_EQ(parse_error({"--optim.eps=-1"}), "optim.eps must be > 0 (got -1)");
  // One rule, the corpus's: the schema said [0, 1) while loading refused 0 and 0.5 up as "(0, 0.5)".
  for (const char* heldout : {"0", "0.5", "0.9"})
    EXPECT_EQ(parse_error({std::string("--data.heldout=") + heldout}), std::string("data.heldout must be in (0, 0.5) (got ") + heldout + ")");
  EXPECT_EQ(parse_error({"--train.steps=0"}), "train.steps must be in [1, 100000000] (got 0)");
  EXPECT_EQ(parse_error({"--train.steps=100000001"}), "train.steps must be in [1, 100000000] (got 100000001)");
  EXPECT_EQ(parse_error({"--train.seed=-1"}), "train.seed must be a whole number >= 0 (got '-1')");
  EXPECT_EQ(parse_error({"--train.steps=1.5e3"}), "no error");
  // A shape whose parameter count would wrap around in whole numbers (the memory check passed width 4e9).
  EXPECT_EQ(parse_error({"--model.width=4e9", "--model.heads=1"}),
            "model.width 4000000000, layers 2 and context 128 give 3.84e+20 parameters (vocabulary 256), more than "
            "1e+15: no machine holds that");
  EXPECT_EQ(parse_error({"--model.width=65536", "--model.heads=1", "--model.layers=1000"}), "no error");
  EXPECT_EQ(parse_error({"--train.steps=1.5"}), "train.steps must be a whole number (got '1.5')");
  EXPECT_EQ(parse_error({"--train.seed=-1e3"}), "train.seed must be a whole number >= 0 (got '-1e3')");
  EXPECT_EQ(parse_error({"--hdet.enabled=maybe"}), "hdet.enabled must be true or false (got 'maybe')");
  EXPECT_EQ(parse_error({"--train.skip_loss_z=-3"}), "train.skip_loss_z must be >= 0 (got -3)");
  EXPECT_EQ(parse_error({"--train.skip_grad_z=inf"}), "train.skip_grad_z must be a finite number (got 'inf')");
  EXPECT_EQ(parse_error({"--train.spike_window=1"}), "train.spike_window must be >= 2 (got 1)");
  EXPECT_EQ(parse_error({"--config", lrkit::testing::scratch_dir().string()}),
            "config file '" + lrkit::testing::scratch_dir().string() + "' is a directory, not a file");
  EXPECT_EQ(parse_error({"--config", "/dev/zero"}),
            "config file '/dev/zero' is not a regular file (a device or pipe may never end)");
}

// Run lengths are written 1e4 or 2.5e4 as often as 10000; the record keeps the digits.
TEST(TrainConfigSchema, WholeNumberKeysTakeExactlyWholeDecimals) {
  TrainConfig c;
  std::string help;
  ASSERT_TRUE(parse_train_config({"--train.steps=2.5e4", "--train.seed=1e3", "--checkpoint.at=1e4, 2e4", "--eval.every=5e3"}, c, help));
  EXPECT_EQ(c.train.steps, 25000);
  EXPECT_EQ(c.train.seed, 1000u);
  EXPECT_EQ(c.checkpoint_steps(), (std::vector<int64_t>{10000, 20000}));
  EXPECT_EQ(c.eval.every, 5000);
  const auto values = config_values(c);
  const std::map<std::string, std::string> recorded(values.begin(), values.end());
  EXPECT_EQ(recorded.at("train.steps"), "25000");
  EXPECT_EQ(recorded.at("train.seed"), "1000");
  EXPECT_EQ(parse_error({"--checkpoint.at=1e-3"}), "checkpoint.at entry '1e-3' must be a step in [1, train.steps = 200]");
  EXPECT_EQ(parse_error({"--train.batch=2.5e0"}), "train.batch must be a whole number (got '2.5e0')");
}

TEST(TrainConfigSchema, AnUnknownKeyNamesTheKeyItsTypoMostLikelyMeant) {
  EXPECT_EQ(parse_error({"--trian.steps=3"}), "unrecognised option '--trian.steps=3'; did you mean --train.steps?");
  EXPECT_EQ(parse_error({"--model.layerz", "3"}), "unrecognised option '--model.layerz'; did you mean --model.layers?");
  EXPECT_EQ(parse_error({"--zzz=1"}), "unrecognised option '--zzz=1'");
  EXPECT_EQ(parse_error({"--TRAIN.STEPS=3"}), "unrecognised option '--TRAIN.STEPS=3'; did you mean --train.steps?");
  // A config file given without --config trained the defaults: Boost drops a word that belongs to no option.
  EXPECT_EQ(parse_error({"--train.steps=3", "quickstart.cfg"}),
            "unexpected argument 'quickstart.cfg': lrkit train takes options only (a config file is --config FILE)");
  EXPECT_EQ(parse_error({"--overwrite", "yes"}),
            "unexpected argument 'yes': lrkit train takes options only (a config file is --config FILE)");
  const auto path = lrkit::testing::write_text("typo.cfg", "[train]\nsteps = 7\n[optim]\nweight_dacay = 0.1\n");
  EXPECT_EQ(parse_error({"--config", path}),
            "config file '" + path + "' line 4: unrecognised option 'optim.weight_dacay'; did you mean 'weight_decay' in [optim]?");
  const auto sectionless = lrkit::testing::write_text("sectionless.cfg", "steps = 7\n");
  EXPECT_EQ(parse_error({"--config", sectionless}),
            "config file '" + sectionless + "' line 1: unrecognised option 'steps'; did you mean 'steps' in [train]?");
}

// Boost names neither the line of a bad value nor of a bad line; a config file's errors do.
TEST(TrainConfigSchema, AConfigFilesErrorsNameItsLine) {
  const auto error_in = [](const std::string& text, std::vector<std::string> more = {}) {
    const auto path = lrkit::testing::write_text("lines.cfg", text);
    more.insert(more.begin(), {"--config", path});
    const auto what = parse_error(more);
    const std::string prefix = "config file '" + path + "' ";
    return what.rfind(prefix, 0) == 0 ? what.substr(prefix.size()) : what;
  };
  EXPECT_EQ(error_in("[train]\nsteps = 7\n\n# the optimizer\n[optim]\nbeta1 = 1.5  # too high\n"),
            "line 6: optim.beta1 must be in [0, 1) (got 1.5)");
  EXPECT_EQ(error_in("train.steps = 7x\n"), "line 1: train.steps must be a whole number (got '7x')");
  EXPECT_EQ(error_in("[train]\nsteps = 7\n[optim]\nweight_dacay = 0.1\n"),
            "line 4: unrecognised option 'optim.weight_dacay'; did you mean 'weight_decay' in [optim]?");
  EXPECT_EQ(error_in("[train]\nsteps = 7\nbatch = 4\nsteps = 8\n"), "line 4: option 'train.steps' cannot be specified more than once");
  EXPECT_EQ(error_in("[train\nsteps = 7\n"), "line 1: the options configuration file contains an invalid line '[train'");
  // Bytes that are no UTF-8 text (a Latin-1 editor's) are quoted escaped, not sent to the terminal.
  EXPECT_EQ(error_in("[train\xe9\nsteps = 7\n"),
            "line 1: the options configuration file contains an invalid line '[train\\xe9'");
  EXPECT_EQ(error_in("[model]\nlay\xe9rs = 1\n"), "line 2: unrecognised option 'model.lay\\xe9rs'; did you mean 'layers' in [model]?");
  EXPECT_EQ(error_in(std::string("\xFF\xFE[\0t\0r\0a\0i\0n\0]\0", 16)), "is UTF-16 text: save it as UTF-8");
  // A value given on the command line is the command line's, not the file's.
  EXPECT_EQ(error_in("[optim]\nbeta1 = 0.9\n", {"--optim.beta1=2"}), "optim.beta1 must be in [0, 1) (got 2)");
  // A rule across keys names the lines of those the file set, not of those given on the command line.
  EXPECT_EQ(error_in("[train]\nsteps = 7\nbatch = 30\naccumulation = 4\n"),
            "lines 3 and 4: train.batch (30) must be a multiple of train.accumulation (4)");
  EXPECT_EQ(error_in("[train]\nsteps = 7\nbatch = 30\n", {"--train.accumulation=4"}),
            "line 3: train.batch (30) must be a multiple of train.accumulation (4)");
  EXPECT_EQ(error_in("[train]\nbatch = 8\n", {"--train.batch=30", "--train.accumulation=4"}),
            "train.batch (30) must be a multiple of train.accumulation (4)");
  EXPECT_EQ(error_in("[hdet]\nenabled = true\ndropout_alpha = 0.1\n"),
            "line 3: hdet.dropout_alpha > 0 spreads model.dropout, which is 0");
  EXPECT_EQ(error_in("[checkpoint]\nat = 300\n"), "line 2: checkpoint.at entry '300' must be a step in [1, train.steps = 200]");
  // A value is quoted to 80 characters: a pasted blob made the message as long as the blob.
  EXPECT_EQ(error_in("[train]\nsteps = " + std::string(5000, '7') + "x\n"),
            "line 2: train.steps must be a whole number (got '" + std::string(80, '7') + "...')");
}

TEST(TrainConfigSchema, HelpListsEveryKeyWithItsDefault) {
  TrainConfig c;
  std::string help;
  ASSERT_FALSE(parse_train_config({"--help"}, c, help));
  for (const auto& key : train_config_schema()) EXPECT_NE(help.find("--" + key.name), std::string::npos) << key.name;
  EXPECT_NE(help.find("--optim.name arg (=adamw)"), std::string::npos) << help;
  EXPECT_NE(help.find("--hdet.alpha arg (=0.1111111111111111)"), std::string::npos) << help;
}

}  // namespace
}  // namespace lrkit::train
