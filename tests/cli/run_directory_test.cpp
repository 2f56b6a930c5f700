// `lrkit train` owns its run directory: one writer at a time, an earlier run is
// never mixed into a new one (nor moved off the disk a link names), a finished run resumes to a no-op, and a stop
// signal, to a run or to the --nproc launcher alone, ends every worker after its
// step with a checkpoint of it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <vector>

#include "background_run.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/run_files.hpp"
#include "run_command.hpp"
#include "tiny_run.hpp"

namespace lrkit::testing {
namespace {

namespace fs = std::filesystem;

TEST(RunDirectory, ASecondWriterIsRefusedAndTheFirstLogStaysIntact) {
  const auto dir = out_dir("two_writers");
  const pid_t first = start_train("--config " + tiny_config() + " --train.steps=100000 --log.flush_every=1 --out " + dir,
                                  dir + ".first.txt");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir + "/log.h5") && fs::file_size(dir + "/lrkit.lock") > 0; }));
  const auto second = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --out " + dir);
  EXPECT_EQ(second.code, 2) << second.out;
  EXPECT_NE(second.out.find("is in use by another lrkit train (pid " + std::to_string(first) + ")"), std::string::npos)
      << second.out;
  kill(first, SIGTERM);
  int status = 0;
  waitpid(first, &status, 0);
  const auto steps = h5::read_series(dir + "/log.h5", "/train/step");  // readable, one row per step
  ASSERT_FALSE(steps.empty());
  for (size_t i = 0; i < steps.size(); ++i) EXPECT_EQ(steps[i], static_cast<double>(i));
}

// `lrkit log check` probes a run directory's lock with a shared flock held for an instant: a train that took the
// lock in that instant was refused as "in use by another lrkit train". It waits such a probe out.
TEST(RunDirectory, ATrainStartingWhileLogCheckProbesTheLockWaitsTheProbeOut) {
  const auto dir = out_dir("probed_lock");
  fs::create_directories(dir);
  const std::string lock = dir + "/lrkit.lock";
  const int probe = ::open(lock.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC, 0644);  // the train must not inherit it
  ASSERT_GE(probe, 0);
  ASSERT_EQ(::flock(probe, LOCK_SH | LOCK_NB), 0);
  const pid_t train = start_train("--config " + tiny_config() + " --out " + dir, dir + ".txt");
  // The probe ends once the train has opened the lock file: it then meets the probe's lock, as it did in the race.
  int status = 0;
  bool exited = false;
  const auto opened_the_lock = [&] {
    if (waitpid(train, &status, WNOHANG) == train) return exited = true;
    std::error_code ec;
    // Before its execs (the shell's of lrkit, then lrkit's of lrkit-torch, keeping the pid) the child still holds the
    // probe's descriptor, which would read as the train's.
    if (fs::read_symlink("/proc/" + std::to_string(train) + "/exe", ec) != fs::canonical(LRKIT_TORCH_BINARY)) return false;
    for (const auto& fd : fs::directory_iterator("/proc/" + std::to_string(train) + "/fd", ec))
      if (fs::read_symlink(fd.path(), ec) == fs::path(lock)) return true;
    return false;
  };
  const bool met = wait_for(opened_the_lock, 60, std::chrono::milliseconds(1)) && !exited;
  ::close(probe);
  if (!exited) waitpid(train, &status, 0);
  std::string out;
  std::getline(std::ifstream(dir + ".txt"), out, '\0');
  EXPECT_TRUE(met) << out;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
  EXPECT_EQ(out.find("in use"), std::string::npos) << out;
  EXPECT_TRUE(fs::exists(dir + "/log.h5"));
}

// `lrkit log check` on the log of a run still training reported the run's own SWMR mark as a killed writer's (exit 1,
// with advice to repair it). A live writer's log is checked up to its last whole flush, and says whose it is.
TEST(RunDirectory, TheLogOfARunStillTrainingChecksOkSoFar) {
  const auto dir = out_dir("live_log");
  const pid_t writer = start_train("--config " + tiny_config() + " --train.steps=100000 --log.flush_every=1 --out " + dir,
                                   dir + ".writer.txt");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir + "/log.h5") && fs::file_size(dir + "/lrkit.lock") > 0; }));
  // A link to the log kept elsewhere ("latest.h5"): its run directory is the log's. Through the link, the check
  // called the live mark a killed writer's, and `log repair` took a lock beside the link and cut the live log.
  const std::string link = dir + ".latest.h5";
  fs::create_symlink(fs::path(dir).filename() / "log.h5", link);
  for (int i = 0; i < 5; ++i) {
    const auto r = run_lrkit("log check " + (i % 2 == 0 ? dir : link));
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find(" steps so far: lrkit train (pid " + std::to_string(writer) + ") is writing it)"),
              std::string::npos) << r.out;
  }
  const auto repair = run_lrkit("log repair " + link);
  EXPECT_EQ(repair.code, 2) << repair.out;
  EXPECT_NE(repair.out.find("'" + link + "' is being written by lrkit train (pid " + std::to_string(writer) + ")"),
            std::string::npos) << repair.out;
  kill(writer, SIGTERM);
  int status = 0;
  waitpid(writer, &status, 0);
  const auto r = run_lrkit("log check " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("log.h5: ok ("), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("so far"), std::string::npos) << r.out;
}

// A resume with another batch, model or diagnostics went on (or failed in a worker once the log's layout
// differed), and the log's /config still named the first settings. Now the keys that define the run must match the
// log's, all differences named in one line before anything starts; how the run is carried out may change.
TEST(RunDirectory, AResumeWithSettingsThatDefineAnotherRunIsRefusedNamingEachChange) {
  const auto dir = out_dir("resumed_settings");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --checkpoint.every=6 --out " + dir).code, 0);
  fs::remove(dir + "/checkpoints/step_0000000012.pt");
  const auto rows = h5::read_series(dir + "/log.h5", "/train/step").size();
  auto r = run_lrkit("train --config " + tiny_config() + " --resume auto --nproc 2 --train.batch=16 --model.width=32 "
                     "--diagnostics.pairwise=exact --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  EXPECT_EQ(r.out.rfind("lrkit train: run directory '" + dir + "' holds a run with other settings: ", 0), 0u) << r.out;
  for (const char* change : {"workers = 1 there, 2 here", "train.batch = 8 there, 16 here", "model.width = 16 there, 32 here",
                             "diagnostics.pairwise = off there, exact here", "--branch-from CHECKPOINT --out NEW_DIR"})
    EXPECT_NE(r.out.find(change), std::string::npos) << change << "\n" << r.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), rows) << "the log is untouched";
  // How the run is carried out may change: accumulation, intervals, the corpus's path.
  const auto corpus = fs::path(tiny_config()).parent_path() / "dp_corpus.txt";
  fs::copy_file(corpus, dir + "_moved_corpus.txt", fs::copy_options::overwrite_existing);
  r = run_lrkit("train --config " + tiny_config() + " --resume auto --train.accumulation=2 --train.log_every=3 "
                "--checkpoint.every=4 --data.path=" + dir + "_moved_corpus.txt --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from"), std::string::npos) << r.out;
  // Said at the start, and kept in the log's record of the session.
  const std::string changed = "data.path = " + corpus.string() + " -> " + dir + "_moved_corpus.txt; train.accumulation = "
                              "1 -> 2; train.log_every = 6 -> 3; checkpoint.every = 6 -> 4";
  EXPECT_NE(r.out.find("\nchanged since the session before: " + changed + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_string_attributes(dir + "/log.h5", "/sessions/1").at("changed"), changed);
}

// The corpus may move, but a resume must find what the run trained on: a file rewritten in place keeps every setting.
TEST(RunDirectory, AResumeOnACorpusRewrittenInPlaceIsRefusedAndACopyElsewhereGoesOn) {
  const auto dir = out_dir("rewritten_corpus");
  const std::string text = lrkit::read_text(fs::path(tiny_config()).parent_path() / "dp_corpus.txt");
  const auto corpus = lrkit::testing::write_text("rewritten_corpus.txt", text);
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --checkpoint.every=6 --data.path=" + corpus + " --out " + dir).code, 0);
  fs::remove(dir + "/checkpoints/step_0000000012.pt");
  const std::string logged = h5::read_string_attributes(dir + "/log.h5", "/files").at("data.path");
  const std::string size = std::to_string(text.size()) + " bytes, sampled crc32:";
  EXPECT_EQ(logged.rfind(size, 0), 0u) << logged;
  // Another version of the corpus, of the same size, under the same name: every setting is as it was.
  std::string edited = text;
  edited.replace(edited.find("meek"), 4, "MEEK");
  lrkit::testing::write_text("rewritten_corpus.txt", edited);
  auto r = run_lrkit("train --config " + tiny_config() + " --resume auto --data.path=" + corpus + " --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(count_lines(r.out), 1) << r.out;
  const std::string named = "holds a run with other settings: the contents of data.path ('" + corpus + "') = " + logged +
                            " there, " + size;
  EXPECT_NE(r.out.find(named), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find(logged + " here"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), 12u) << "the log is untouched";
  // The original, copied to another path: the run goes on there.
  const auto copy = lrkit::testing::write_text("rewritten_corpus_copy.txt", text);
  r = run_lrkit("train --config " + tiny_config() + " --resume auto --data.path=" + copy + " --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_string_attributes(dir + "/log.h5", "/files").at("data.path"), logged);
}

// Overwrites the start of `path` in place (not truncated: the pages under the run's mapping change) while `run` trains
// into `dir`, and waits for the run to stop: its exit status, its output and the step of its newest checkpoint.
struct StoppedByARewrite {
  int status = 0;
  std::string out;
  std::string newest;
  int64_t kept = -1;
};

StoppedByARewrite rewrite_under_the_run(pid_t run, const std::string& path, const std::string& dir) {
  {
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file << std::string(64, 'x');
  }
  StoppedByARewrite stopped;
  waitpid(run, &stopped.status, 0);
  stopped.out = run_command("cat " + dir + ".txt").out;
  if (const auto found = train::latest_checkpoint(dir)) {
    stopped.newest = *found;
    stopped.kept = *train::checkpoint_step_of(fs::path(*found).filename().string());
  }
  return stopped;
}

// The run stopped by rewrite_under_the_run: not put back, the file refuses the resume, named by its setting `named`;
// put back (`text` written again to `file`, a scratch name), the run goes on from its newest checkpoint.
void expect_the_resume_refused_until_put_back(const std::string& args, const StoppedByARewrite& stopped,
                                              const std::string& named, const std::string& file, const std::string& text) {
  const std::string resume = "train " + args + " --resume auto --train.steps=" + std::to_string(stopped.kept + 2);
  auto r = run_lrkit(resume);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("the contents of " + named), std::string::npos) << r.out;
  lrkit::testing::write_text(file, text);
  r = run_lrkit(resume);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from " + stopped.newest), std::string::npos) << r.out;
}

// Rewritten in place while the run reads it, a corpus's mapped pages change: the steps since the last checkpoint may
// have read new bytes beside the old, and went on unseen into the next checkpoint.
TEST(RunDirectory, ACorpusRewrittenUnderTheRunStopsItBeforeItsNextCheckpoint) {
  const auto dir = out_dir("rewritten_under_run");
  const std::string text = lrkit::read_text(fs::path(tiny_config()).parent_path() / "dp_corpus.txt");
  const auto corpus = lrkit::testing::write_text("rewritten_under_run_corpus.txt", text);
  const std::string args = "--config " + tiny_config() + " --schedule.spec='constant(1e-2, warmup=2)' --nproc 2 "
                           "--checkpoint.every=10 --data.path=" + corpus + " --out " + dir;  // length-independent rates
  const pid_t launcher = start_train(args + " --train.steps=100000", dir + ".txt");
  ASSERT_EQ(workers_once_checkpointed(launcher, dir).size(), 2u);
  const auto stopped = rewrite_under_the_run(launcher, corpus, dir);
  const auto& [status, out, newest, kept] = stopped;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  ASSERT_GE(kept, 10) << out;
  const std::string said = "lrkit train: data file '" + corpus + "' changed while the run read it (" +
                           std::to_string(text.size()) + " bytes, sampled crc32:";
  const auto at = out.find(said);
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_EQ(out.find(said, at + 1), std::string::npos) << "said once, by rank 0\n" << out;
  EXPECT_NE(out.find(" now): the steps after " + newest + " may have read the new bytes, so step " +
                     std::to_string(kept + 10) + " was not checkpointed; put the file back and continue with --resume auto"),
            std::string::npos) << out;
  expect_the_resume_refused_until_put_back(args, stopped, "data.path ('" + corpus + "')", "rewritten_under_run_corpus.txt",
                                           text);
}

// An evaluation set's file of its own, rewritten in place: the weights are sound but the evaluations since the last
// checkpoint may have scored the new bytes, and a resume re-evaluates from that checkpoint.
TEST(RunDirectory, AnEvaluationFileRewrittenUnderTheRunIsNamedAsOneAndItsEvaluationsAsWhatReadIt) {
  const auto dir = out_dir("eval_rewritten_under_run");
  const std::string text = lrkit::read_text(fs::path(tiny_config()).parent_path() / "dp_corpus.txt");
  const auto scored = lrkit::testing::write_text("eval_rewritten_under_run_set.txt", text);
  const std::string args = "--config " + tiny_config() + " --schedule.spec='constant(1e-2, warmup=2)' "
                           "--checkpoint.every=10 --eval.every=5 --eval.sets='heldout, other=" + scored + "' --out " + dir;
  const pid_t run = start_train(args + " --train.steps=100000", dir + ".txt");
  // Any checkpoint: the run saves every 10 steps and keeps the newest 3, so step 10's was pruned within milliseconds
  // where a poll came late (a loaded machine: the wait timed out with the run at step 32,820).
  ASSERT_TRUE(wait_for([&] { return train::latest_checkpoint(dir).has_value(); }, 60));
  const auto stopped = rewrite_under_the_run(run, scored, dir);
  const auto& [status, out, newest, kept] = stopped;
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 1) << status;
  ASSERT_GE(kept, 10) << out;
  EXPECT_NE(out.find("lrkit train: evaluation set other's file '" + scored + "' changed while the run read it (" +
                     std::to_string(text.size()) + " bytes, sampled crc32:"),
            std::string::npos) << out;
  EXPECT_NE(out.find(" now): the evaluations after " + newest + " may have read the new bytes, so step " +
                     std::to_string(kept + 10) + " was not checkpointed; put the file back and continue with --resume "
                     "auto (--branch-from CHECKPOINT --out NEW_DIR evaluates on the new file)"),
            std::string::npos) << out;
  EXPECT_EQ(out.find("data file"), std::string::npos) << "the training file is unchanged\n" << out;
  expect_the_resume_refused_until_put_back(args, stopped, "eval.sets other ('" + scored + "')",
                                           "eval_rewritten_under_run_set.txt", text);
}

TEST(RunDirectory, AnEarlierRunIsRefusedMovedAsideWithOverwriteAndAFinishedResumeIsANoOp) {
  const auto dir = out_dir("reused");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  auto r = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("holds an earlier run"), std::string::npos) << r.out;
  r = run_lrkit("train --config " + tiny_config() + " --resume auto --out " + dir);  // finished: nothing to do
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("finished at step 12 already; nothing to do"), std::string::npos) << r.out;
  // Named with a trailing slash (a shell's completion), the run was to move into itself: "cannot move 'DIR/' aside to
  // 'DIR/.old-<time>': Invalid argument". Named '.', it cannot move at all: refused before anything starts.
  r = run_command("cd " + dir + " && " + LRKIT_BINARY + " train --config " + tiny_config() + " --overwrite --out .");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "lrkit train: --overwrite cannot move the run directory '.' aside while it is named '.': name it by "
                   "its own name in --out\n");
  r = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --overwrite --out " + dir + "/");
  EXPECT_EQ(r.code, 0) << r.out;
  const auto moved = r.out.find("moved the earlier run in " + dir + "/ to " + dir + ".old-");
  ASSERT_NE(moved, std::string::npos) << r.out;
  int asides = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
    if (entry.path().filename().string().rfind("reused.old-", 0) == 0) {
      ++asides;
      EXPECT_TRUE(fs::exists(entry.path() / "log.h5"));
      lrkit::testing::remove_tree(entry.path());
    }
  EXPECT_EQ(asides, 1);
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), 12u);
}

// --overwrite moves the earlier run aside after the job's rendezvous, where a refusal reaches rank 0 alone: a parent
// it cannot write is refused before anything starts, in words that say so. Root writes any directory, so as root the
// run is made by user nobody (setpriv); another user meets a parent made read-only.
TEST(RunDirectory, AnOverwriteUnderAParentItCannotWriteIsRefusedBeforeAnythingStarts) {
  const bool root = ::geteuid() == 0;
  const std::string as_user = root ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";
  const auto parent = fs::path(out_dir("unwritable_parent"));
  const std::string dir = (parent / "run").string();
  fs::create_directories(parent);
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  if (root) {
    // chmod(2), not std::filesystem's: LibTorch 2.x wheels export a copy of the latter (bench/GPU_NOTES.md).
    for (const fs::path& reached : {scratch_dir(), parent}) ASSERT_EQ(::chmod(reached.c_str(), 0755), 0);
    for (const fs::path& read : {fs::path(tiny_config()), scratch_dir() / "dp_corpus.txt"})
      ASSERT_EQ(::chmod(read.c_str(), 0644), 0);
    ASSERT_EQ(run_command("chown -R 65534:65534 " + dir).code, 0);
    const auto probe = run_command(as_user + LRKIT_BINARY + " schedule 'constant(1)' -n 1 && cat " + tiny_config());
    if (probe.code != 0) GTEST_SKIP() << "user nobody cannot run lrkit here (setpriv missing, or the build unreadable): " << probe.out;
  } else {
    ASSERT_EQ(::chmod(parent.c_str(), 0500), 0);
  }
  const auto refused = run_command(as_user + LRKIT_BINARY + " train --config " + tiny_config() + " --overwrite --out " + dir);
  EXPECT_EQ(refused.code, 2) << refused.out;
  EXPECT_EQ(refused.out, "lrkit train: --overwrite cannot move the earlier run in '" + dir + "' aside: its parent directory '" +
                             parent.string() + "' is not writable (Permission denied)\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(parent), fs::directory_iterator()), 1) << "nothing moved aside";
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), 12u);
  // The same run under a parent it can write moves the earlier run aside: the refusal above was the parent's.
  if (root) {
    ASSERT_EQ(run_command("chown 65534:65534 " + parent.string()).code, 0);
  } else {
    ASSERT_EQ(::chmod(parent.c_str(), 0700), 0);
  }
  const auto moved = run_command(as_user + LRKIT_BINARY + " train --config " + tiny_config() + " --overwrite --out " + dir);
  EXPECT_EQ(moved.code, 0) << moved.out;
  EXPECT_NE(moved.out.find("moved the earlier run in " + dir + " to " + dir + ".old-"), std::string::npos) << moved.out;
}

// A second --overwrite within one second found DIR.old-<time> taken and failed ("Directory not empty"). Here the
// names of the next 30 seconds are all taken (each a non-empty directory), so the run must pick DIR.old-<time>-2.
TEST(RunDirectory, AnOverwriteWhoseAsideNameIsTakenPicksTheNextOne) {
  const auto dir = out_dir("reused_twice");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  const auto now = std::chrono::system_clock::now();
  for (int s = 0; s < 30; ++s) {
    const std::time_t t = std::chrono::system_clock::to_time_t(now + std::chrono::seconds(s));
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", std::gmtime(&t));
    fs::create_directories(dir + ".old-" + stamp + "/earlier");
  }
  const auto r = run_lrkit("train --config " + tiny_config() + " --overwrite --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  const auto moved = r.out.find("moved the earlier run in " + dir + " to " + dir + ".old-");
  ASSERT_NE(moved, std::string::npos) << r.out;
  const auto line = r.out.substr(moved, r.out.find('\n', moved) - moved);
  EXPECT_NE(line.find("Z-2"), std::string::npos) << line;
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
    if (entry.path().filename().string().rfind("reused_twice.old-", 0) == 0) {
      logs += fs::exists(entry.path() / "log.h5");
      lrkit::testing::remove_tree(entry.path());
    }
  EXPECT_EQ(logs, 1);
}

// --out named by a link to a directory on another disk ("runs/a -> ../scratch/a"): a link made before its directory
// was refused ("cannot create run directory: File exists"), and --overwrite moved the link aside and wrote the next
// run beside it, off the disk it named. The directory goes aside on its own disk; the link stays and names the new run.
TEST(RunDirectory, ARunDirectoryNamedByALinkIsMadeAndMovedAsideWhereTheLinkLeads) {
  const auto root = fs::path(out_dir("linked_out"));
  fs::create_directories(root / "runs");
  fs::create_directories(root / "scratch");
  const std::string link = (root / "runs" / "a").string();
  fs::create_symlink("../scratch/a", link);
  auto r = run_lrkit("train --config " + tiny_config() + " --out " + link);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(fs::exists(root / "scratch" / "a" / "log.h5"));
  r = run_lrkit("train --config " + tiny_config() + " --train.seed=7 --overwrite --out " + link);
  EXPECT_EQ(r.code, 0) << r.out;
  const std::string aside_prefix = (fs::canonical(root) / "scratch" / "a.old-").string();
  EXPECT_NE(r.out.find("moved the earlier run in " + link + " to " + aside_prefix), std::string::npos) << r.out;
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), "../scratch/a");
  std::vector<std::string> entries;
  for (const auto& entry : fs::directory_iterator(root / "scratch")) entries.push_back(entry.path().filename().string());
  std::sort(entries.begin(), entries.end());
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0], "a");
  EXPECT_EQ(entries[1].rfind("a.old-", 0), 0u) << entries[1];
  EXPECT_TRUE(fs::exists(root / "scratch" / entries[1] / "log.h5"));
  EXPECT_EQ(h5::read_series(link + "/log.h5", "/train/step").size(), 12u);
  std::vector<std::string> beside_the_link;
  for (const auto& entry : fs::directory_iterator(root / "runs")) beside_the_link.push_back(entry.path().filename().string());
  EXPECT_EQ(beside_the_link, std::vector<std::string>{"a"});
}

TEST(RunDirectory, AResumeFromAMissingOrDamagedCheckpointLeavesNoRunDirectory) {
  const auto damaged = write_text("damaged.pt", "not a checkpoint\n");
  for (const auto& [checkpoint, problem] :
       std::vector<std::pair<std::string, std::string>>{{damaged + "_missing", "' does not exist"}, {damaged, damaged}}) {
    for (const char* workers : {"1", "2"}) {
      const auto dir = out_dir("resume_refused");
      const auto r = run_lrkit("train --config " + tiny_config() + " --nproc " + workers + " --resume " + checkpoint +
                               " --out " + dir);
      EXPECT_EQ(r.code, 2) << r.out;
      EXPECT_EQ(count_lines(r.out), 1) << r.out;
      EXPECT_EQ(r.out.rfind("lrkit train: ", 0), 0u) << r.out;
      EXPECT_NE(r.out.find(problem), std::string::npos) << r.out;
      EXPECT_FALSE(std::filesystem::exists(dir)) << checkpoint << " with " << workers << " worker(s)";
    }
  }
  // --resume auto's newest checkpoint, damaged, named for a step before the end: a lone worker reads it once, when it
  // restores, and a launcher before its workers start, so that it is refused in one line there too.
  const auto run = out_dir("resume_auto_damaged");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --checkpoint.at=6 --out " + run).code, 0);
  const auto newest = run + "/checkpoints/step_0000000009.pt";
  std::filesystem::rename(run + "/checkpoints/step_0000000012.pt", newest);
  std::filesystem::resize_file(newest, 1000);
  for (const char* workers : {"1", "2"}) {
    const auto r = run_lrkit("train --config " + tiny_config() + " --nproc " + workers + " --resume auto --out " + run);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_EQ(count_lines(r.out), 1) << r.out;
    EXPECT_EQ(r.out.rfind("lrkit train: checkpoint '" + newest + "' is truncated or extended", 0), 0u) << r.out;
  }
}

// Resumed for more steps, a cosine run would take other rates than it trained with (it had decayed to 0 and
// would jump back up): refused, naming the step and both ways on. A constant run's rates do not depend on the
// length, so it goes on.
TEST(RunDirectory, AResumeForAnotherLengthGoesOnOnlyWhereTheTrainedRatesStayTheSame) {
  const auto dir = out_dir("longer_cosine");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  const std::string checkpoint = dir + "/checkpoints/step_0000000012.pt";
  auto r = run_lrkit("train --config " + tiny_config() + " --train.steps=20 --resume auto --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "lrkit train: checkpoint '" + checkpoint + "' was trained for train.steps = 12; with 20 steps its schedule "
                   "'cosine(peak=1e-2, warmup=2)' gives other rates from update 3 on (0.009755282581475769 then, "
                   "0.00992403876506104 now), so the resumed run would not be the run it continues. Resume with "
                   "--train.steps=12, or continue under the schedule of 20 steps on purpose in a new run directory: --branch-from " +
                       checkpoint + " --out NEW_DIR\n");
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), 12u) << "the refused resume left the log alone";
  const auto branch = out_dir("longer_cosine_branch");
  r = run_lrkit("train --config " + tiny_config() + " --train.steps=20 --branch-from " + checkpoint + " --out " + branch);
  EXPECT_EQ(r.code, 0) << r.out;

  const auto constant = out_dir("longer_constant");
  const std::string spec = " --schedule.spec='constant(1e-2, warmup=2)'";
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + spec + " --out " + constant).code, 0);
  r = run_lrkit("train --config " + tiny_config() + spec + " --train.steps=20 --resume auto --out " + constant);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(h5::read_series(constant + "/log.h5", "/train/step").size(), 20u);
}

// The spec may change too where the trained updates keep their rates: a constant run goes on with a decay joined
// after it (the log says which schedule it goes on with); a cosine in its place is refused, naming the update.
TEST(RunDirectory, AResumeUnderAnotherSpecGoesOnOnlyWhereTheTrainedRatesStayTheSame) {
  const auto dir = out_dir("respecified");
  const std::string constant = "constant(1e-2, warmup=2)";
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --schedule.spec='" + constant + "' --out " + dir).code, 0);
  const std::string checkpoint = dir + "/checkpoints/step_0000000012.pt";
  auto r = run_lrkit("train --config " + tiny_config() + " --schedule.spec='cosine(peak=1e-2, warmup=2)' --train.steps=20 "
                     "--resume auto --out " + dir);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out, "lrkit train: checkpoint '" + checkpoint + "' was trained with schedule '" + constant + "' (train.steps = "
                   "12); the config's 'cosine(peak=1e-2, warmup=2)' with 20 steps gives other rates from update 3 on (0.01 "
                   "then, 0.00992403876506104 now), so the resumed run would not be the run it continues. Resume with the "
                   "schedule it was trained with, or continue under the new one on purpose in a new run directory: "
                   "--branch-from " + checkpoint + " --out NEW_DIR\n");
  const std::string decayed = "join(constant(1e-2, warmup=2), linear(1e-2, 0), at=[12])";
  r = run_lrkit("train --config " + tiny_config() + " --schedule.spec='" + decayed + "' --train.steps=20 --resume auto --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("schedule: now '" + decayed + "', whose rates over the 12 updates trained are those of '" + constant +
                       "' it was trained with\n"), std::string::npos) << r.out;
  const auto lr = h5::read_series(dir + "/log.h5", "/train/lr");
  ASSERT_EQ(lr.size(), 20u);
  EXPECT_EQ(lr[11], 1e-2);
  EXPECT_LT(lr[19], 2e-3);
  EXPECT_EQ(h5::read_string_attributes(dir + "/log.h5", "/").at("schedule_spec"), decayed);
  EXPECT_EQ(h5::read_string_attributes(dir + "/log.h5", "/config").at("train.steps"), "20");
  // Finished, it is finished under either spec that gives its updates their rates.
  r = run_lrkit("train --config " + tiny_config() + " --schedule.spec='join(constant(1e-2, warmup=2), linear(1e-2, 0), "
                "at=[12]) ' --train.steps=20 --resume auto --out " + dir);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("finished at step 20 already; nothing to do"), std::string::npos) << r.out;
}

TEST(RunDirectory, ASignalStopsARunAfterItsStepWithACheckpointOfItAndTheRunResumes) {
  const auto dir = out_dir("single_signal");
  // A rate that does not depend on the run's length, so that the run stopped in a 100000-step run resumes as a
  // shorter one (a cosine's rates would change: refused).
  const std::string args = "--config " + tiny_config() + " --schedule.spec='constant(1e-2, warmup=2)' --checkpoint.every=1000 --out " + dir;
  const pid_t run = start_train(args + " --train.steps=100000", dir + ".txt");
  // Training (the loop that handles the signal) has begun once a progress line is out.
  ASSERT_TRUE(wait_for([&] { return run_command("cat " + dir + ".txt").out.find("\nstep ") != std::string::npos; }, 60));
  kill(run, SIGINT);
  int status = 0;
  waitpid(run, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGINT) << status;
  const int64_t stopped = expect_a_clean_stop(dir, run_command("cat " + dir + ".txt").out, "Interrupt");
  ASSERT_GT(stopped, 0);
  const auto r = run_lrkit("train " + args + " --resume auto --train.steps=" + std::to_string(stopped + 3));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from " + dir + "/checkpoints/step_"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), static_cast<size_t>(stopped + 3));
}

TEST(RunDirectory, ASignalToTheLauncherAloneStopsEveryWorkerAndTheRunResumes) {
  const auto dir = out_dir("launcher_signal");
  const std::string args = "--config " + tiny_config() + " --schedule.spec='constant(1e-2, warmup=2)' --nproc 2 "
                           "--checkpoint.every=10 --hdet.enabled=true --out " + dir;  // length-independent rates, as above
  const pid_t launcher = start_train(args + " --train.steps=100000", dir + ".txt");
  const auto workers = workers_once_checkpointed(launcher, dir);
  ASSERT_EQ(workers.size(), 2u);
  kill(launcher, SIGTERM);  // the launcher's PID only, as a job scheduler or `kill PID` does
  int status = 0;
  waitpid(launcher, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  for (const pid_t worker : workers) EXPECT_FALSE(running(worker)) << "worker " << worker << " is still alive";
  const auto output = run_command("cat " + dir + ".txt").out;
  EXPECT_EQ(output.find("failed"), std::string::npos) << output;
  const int64_t stopped = expect_a_clean_stop(dir, output, "Terminated");
  ASSERT_GT(stopped, 0);
  // HDET's other replica is checkpointed beside the main file.
  EXPECT_TRUE(fs::exists(dir + "/checkpoints/step_" + std::string(10 - std::to_string(stopped).size(), '0') +
                         std::to_string(stopped) + ".replica_1.pt"));
  const int64_t end = stopped + 5;
  const auto r = run_lrkit("train " + args + " --resume auto --train.steps=" + std::to_string(end));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("resumed from"), std::string::npos) << r.out;
  EXPECT_EQ(h5::read_series(dir + "/log.h5", "/train/step").size(), static_cast<size_t>(end));
}

TEST(RunDirectory, AKilledLauncherStopsEveryWorkerAfterItsStepWithACheckpoint) {
  const auto dir = out_dir("launcher_killed");
  const std::string args = "--config " + tiny_config() + " --schedule.spec='constant(1e-2, warmup=2)' --nproc 2 "
                           "--checkpoint.every=10 --out " + dir;
  const pid_t launcher = start_train(args + " --train.steps=100000", dir + ".txt");
  const auto workers = workers_once_checkpointed(launcher, dir);
  ASSERT_EQ(workers.size(), 2u);
  kill(launcher, SIGKILL);  // nothing to forward: the kernel tells the workers
  int status = 0;
  waitpid(launcher, &status, 0);
  EXPECT_TRUE(wait_for([&] { return std::none_of(workers.begin(), workers.end(), running); }, 60))
      << "the workers of a killed launcher must not train on";
  const auto output = run_command("cat " + dir + ".txt").out;
  EXPECT_GT(expect_a_clean_stop(dir, output, "Terminated"), 0);
}

}  // namespace
}  // namespace lrkit::testing
