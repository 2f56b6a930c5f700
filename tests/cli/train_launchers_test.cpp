// `lrkit train` started by other launchers: the real torchrun (one agent, two
// agents as two nodes, an agent killed outright), SLURM's variables as srun sets them, RANK and WORLD_SIZE
// alone (Kubeflow's), --nproc against what those launchers started, and NCCL
// tasks sharing a GPU.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "background_run.hpp"
#include "device_param.hpp"
#include "lrkit/h5/file.hpp"
#include "openblas.hpp"
#include "process_cpus.hpp"
#include "run_command.hpp"
#include "test_files.hpp"
#include "tiny_run.hpp"

namespace {

using lrkit::testing::expect_same_losses;
using lrkit::testing::out_dir;
using lrkit::testing::run_command;
using lrkit::testing::run_lrkit;
using lrkit::testing::tiny_config;
namespace fs = std::filesystem;

#ifdef LRKIT_TORCH_PYTHON
// `lrkit train` on the tiny config under torchrun with `launcher_options`. --redirects/--tee 1:
// Debian's torch 1.13 launcher fails under Python 3.11 with their default 0 (Std.from_str("0") is None there).
std::string torchrun_train(const std::string& launcher_options, const std::string& out, const std::string& train_options = "") {
  return std::string(LRKIT_TORCH_PYTHON) + " -m torch.distributed.run --redirects 1 --tee 1 " + launcher_options +
         " --no_python " + LRKIT_BINARY + " train --config " + tiny_config() + train_options + " --out " + out;
}
#endif

TEST(TrainCommand, RunsUnderTheRealTorchrunLauncher) {
#ifndef LRKIT_TORCH_PYTHON
  GTEST_SKIP() << "no Python that imports torch was found at configure time (Debian: python3-torch)";
#else
  const auto one = out_dir("tr_one"), two = out_dir("tr_two");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + one).code, 0);
  const auto r = run_command(torchrun_train("--nproc_per_node 2 --master_port " + std::to_string(29600 + getpid() % 300), two));
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_losses(one + "/log.h5", two + "/log.h5");
#endif
}

// torchrun passes a stop signal on to its workers, but an agent killed outright (SIGKILL, the OOM killer) cannot: its
// workers trained on as orphans. They now stop as the --nproc launcher's do, after their step, with its checkpoint.
TEST(TrainCommand, AKilledTorchrunAgentStopsItsWorkersAfterTheirStepWithACheckpoint) {
#ifndef LRKIT_TORCH_PYTHON
  GTEST_SKIP() << "no Python that imports torch was found at configure time (Debian: python3-torch)";
#else
  const auto dir = out_dir("torchrun_agent_killed");
  // --redirects 1: the workers' standard output goes to the agent's files; their errors, and so the stop's message,
  // to this test's log, which outlives the agent.
  const pid_t agent = lrkit::testing::start_command(
      torchrun_train("--standalone --nproc_per_node 2", dir,
                     " --schedule.spec='constant(1e-2, warmup=2)' --checkpoint.every=10 --train.steps=100000"),
      dir + ".txt");
  const auto workers = lrkit::testing::workers_once_checkpointed(agent, dir);
  ASSERT_EQ(workers.size(), 2u) << run_command("cat " + dir + ".txt").out;
  kill(agent, SIGKILL);
  int status = 0;
  waitpid(agent, &status, 0);
  EXPECT_TRUE(lrkit::testing::wait_for(
      [&] { return std::none_of(workers.begin(), workers.end(), lrkit::testing::running); }, 60))
      << "the workers of a killed agent must not train on";
  EXPECT_GT(lrkit::testing::expect_a_clean_stop(dir, run_command("cat " + dir + ".txt").out, "Terminated"), 0);
#endif
}

// The run in `dir` had `workers` workers and trained as the reference run in `reference` did.
void expect_same_run(const std::string& reference, const std::string& dir, const std::string& workers) {
  EXPECT_EQ(lrkit::h5::read_string_attributes(dir + "/log.h5", "/").at("world_size"), workers);
  expect_same_losses(reference + "/log.h5", dir + "/log.h5");
}

// Commands at once (the workers of one job), each one's exit code and output, in the order given.
std::vector<lrkit::testing::CommandResult> run_together(const std::vector<std::string>& commands) {
  std::vector<std::string> outputs;
  std::vector<FILE*> running;
  for (const auto& command : commands) {
    outputs.push_back((lrkit::testing::scratch_dir() / ("together_" + std::to_string(outputs.size()) + ".txt")).string());
    running.push_back(popen(("(" + command + ") > " + outputs.back() + " 2>&1").c_str(), "r"));
  }
  std::vector<lrkit::testing::CommandResult> results(commands.size());
  for (std::size_t i = 0; i < commands.size(); ++i) {
    if (running[i] == nullptr) continue;  // code -1: not started
    const int status = pclose(running[i]);
    results[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    std::ifstream in(outputs[i]);
    results[i].out.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  return results;
}

// Two commands at once (two agents, two SLURM tasks), their outputs one after the other; fails when either does.
lrkit::testing::CommandResult run_both(const std::string& a, const std::string& b) {
  const auto both = run_together({a, b});
  return {both[0].code == 0 && both[1].code == 0 ? 0 : 1, both[0].out + both[1].out};
}

TEST(TrainCommand, TwoTorchrunAgentsWithNnodes2RunOneJobEqualToNproc4) {
#ifndef LRKIT_TORCH_PYTHON
  GTEST_SKIP() << "no Python that imports torch was found at configure time (Debian: python3-torch)";
#else
  const auto local = out_dir("agents_nproc4"), agents = out_dir("agents_two");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 4 --out " + local).code, 0);
  // Two agents (two "nodes" on loopback) meet at a c10d rendezvous and start 2 workers each.
  const std::string agent = torchrun_train("--nnodes 2 --nproc_per_node 2 --rdzv_backend c10d --rdzv_id lrkit_test "
                                           "--rdzv_endpoint 127.0.0.1:" + std::to_string(29900 + getpid() % 90), agents);
  const auto r = run_both("cd " + lrkit::testing::scratch_dir().string() + " && " + agent,
                          "cd " + lrkit::testing::scratch_dir().string() + " && " + agent);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_run(local, agents, "4");
#endif
}

// What srun gives task `id` of a step with `per_node` tasks on each of `nodes` nodes, in an allocation of 8 tasks
// (the step's variables count, not SLURM_NTASKS). No MASTER_ADDR or MASTER_PORT: the step's first node and a port of
// the job (its id from this process's) and of `step`, which keeps the tests that run at once apart.
std::string srun_task(int id, int nodes, int per_node, int step) {
  const std::string node = std::to_string(id / per_node);
  return "env -u RANK -u WORLD_SIZE -u MASTER_ADDR -u MASTER_PORT SLURM_NTASKS=8 SLURM_TASKS_PER_NODE=\"4(x2)\" "
         "SLURM_PROCID=" + std::to_string(id) + " SLURM_LOCALID=" + std::to_string(id % per_node) + " SLURM_NODEID=" +
         node + " SLURM_STEP_NODEID=" + node + " SLURM_STEP_NUM_TASKS=" + std::to_string(nodes * per_node) +
         " SLURM_STEP_TASKS_PER_NODE=\"" + std::to_string(per_node) + "(x" + std::to_string(nodes) + ")\" "
         "SLURM_STEP_NODELIST=localhost SLURM_JOB_ID=" + std::to_string(getpid() % 1000) + " SLURM_STEP_ID=" +
         std::to_string(step) + " ";
}

TEST(TrainCommand, SlurmVariablesStartTheWorkersWhenTorchrunsAreAbsent) {
  const auto local = out_dir("slurm_nproc2"), slurm = out_dir("slurm_tasks");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 2 --out " + local).code, 0);
  const auto task = [&](int id) {
    return srun_task(id, 1, 2, 0) + "SLURM_CPUS_PER_TASK=" + std::to_string(lrkit::testing::process_cpus()) + " " +
           LRKIT_BINARY + " train --config " + tiny_config() + " --out " + slurm;
  };
  const auto r = run_both(task(0), task(1));
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_losses(local + "/log.h5", slurm + "/log.h5");
  // Each task has --cpus-per-task of its own, not half the node's.
  const std::string own = lrkit::testing::worker_threads_text(1, lrkit::testing::process_cpus());
  EXPECT_NE(r.out.find("threads per worker: " + own + "\n"), std::string::npos) << r.out;
  const std::string nodelist = "SLURM_STEP_NODELIST=localhost ";
  std::string no_nodelist = srun_task(0, 1, 2, 0);
  no_nodelist.erase(no_nodelist.find(nodelist), nodelist.size());
  const auto no_host = run_command(no_nodelist + LRKIT_BINARY + " train --config " + tiny_config() + " --out " +
                                   out_dir("slurm_no_master"));
  EXPECT_EQ(no_host.code, 2) << no_host.out;
  EXPECT_EQ(no_host.out, "lrkit train: SLURM_STEP_NUM_TASKS=2 but neither MASTER_ADDR nor SLURM_STEP_NODELIST is set: "
                         "export MASTER_ADDR=(the host of task 0) before srun\n");
  const auto malformed = run_command("env -u RANK SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_CPUS_PER_TASK=all " +
                                     std::string(LRKIT_BINARY) + " train --config " + tiny_config() + " --out " +
                                     out_dir("slurm_bad_cpus"));
  EXPECT_EQ(malformed.code, 2) << malformed.out;
  EXPECT_EQ(malformed.out, "lrkit train: environment variable SLURM_CPUS_PER_TASK='all' is not a whole number of cores >= 1\n");
}

// Two srun tasks as two nodes of one task each: Gloo listens on GLOO_SOCKET_IFNAME's interface (loopback would make
// each of two real machines dial itself).
TEST(TrainCommand, SlurmTasksOnTwoNodesMeetOverGlooSocketIfname) {
  const auto local = out_dir("slurm_nodes_nproc2"), slurm = out_dir("slurm_nodes");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 2 --out " + local).code, 0);
  const auto task = [&](int id) {
    return srun_task(id, 2, 1, 1) + "GLOO_SOCKET_IFNAME=lo " + LRKIT_BINARY + " train --config " + tiny_config() +
           " --out " + slurm;
  };
  const auto r = run_both(task(0), task(1));
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_run(local, slurm, "2");
  // Alone, task 0 waits out the rendezvous; the failure says what several machines need.
  const auto alone = run_command(srun_task(0, 2, 1, 1) + LRKIT_BINARY + " train --config " + tiny_config() +
                                 " --dist.timeout_s=2 --out " + out_dir("slurm_node_alone"));
  EXPECT_NE(alone.code, 0) << alone.out;
  EXPECT_NE(alone.out.find("with 2 workers failed: "), std::string::npos) << alone.out;
  // On a machine whose name resolves to loopback (as Debian's /etc/hosts has it) the hint names that address.
  const auto hint = alone.out.find(" (workers on several machines");
  EXPECT_NE(hint, std::string::npos) << alone.out;
  EXPECT_NE(alone.out.find("GLOO_SOCKET_IFNAME", hint), std::string::npos) << alone.out;
  // Refused before the rendezvous waits for the other task, which is not started here.
  for (const auto& [names, problem] : std::vector<std::pair<std::string, std::string>>{
           {"lo,", " has an empty interface name (expected names such as eth0 or eth0,ib0)"},
           {"lo,lrkit_absent0", ": this machine has no interface 'lrkit_absent0' with an address; `ip -brief "
                                "address` lists its interfaces"}}) {
    const auto refused = run_command(srun_task(0, 2, 1, 1) + "GLOO_SOCKET_IFNAME=" + names + " " + LRKIT_BINARY +
                                     " train --config " + tiny_config() + " --out " + out_dir("slurm_bad_ifname"));
    EXPECT_EQ(refused.code, 2) << refused.out;
    EXPECT_EQ(refused.out, "lrkit train: environment variable GLOO_SOCKET_IFNAME='" + names + "'" + problem + "\n");
  }
}

// What a launcher that sets RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob, a worker per pod) gives worker `rank`
// of 2, whose rendezvous is rank 0's on the loopback at `port`.
std::string pod_worker(int rank, const std::string& port) {
  return "env -u LOCAL_RANK -u LOCAL_WORLD_SIZE -u SLURM_PROCID RANK=" + std::to_string(rank) +
         " WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " GLOO_SOCKET_IFNAME=lo ";
}

// A launcher that sets RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob, a worker per pod) does not say how many
// workers a machine holds. Two workers as two machines (each its own host name, in a UTS namespace of its own): each
// takes its machine's cores, not half, and the job's MFU peak is two machines' (train.peak_tflops is one machine's).
TEST(TrainCommand, WorkersOfALauncherThatTellsNoMachineCountCountTheirMachinesAtTheRendezvous) {
  if (run_command("unshare --uts true").code != 0)
    GTEST_SKIP() << "unshare --uts is not permitted here (it needs root): no second host name on this machine";
  const auto local = out_dir("pods_nproc2"), pods = out_dir("pods");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 2 --out " + local).code, 0);
  const std::string port = std::to_string(29700 + getpid() % 100);
  const auto pod = [&](int rank) {
    return pod_worker(rank, port) + "unshare --uts sh -c \"hostname lrkit-pod-" + std::to_string(rank) + " && exec " +
           LRKIT_BINARY + " train --config " + tiny_config() +
           " --train.peak_tflops=2 --out " + pods + "\"";
  };
  const auto r = run_both(pod(0), pod(1));
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_run(local, pods, "2");
  const std::string whole = lrkit::testing::worker_threads_text(1, lrkit::testing::process_cpus());
  EXPECT_NE(r.out.find("threads per worker: " + whole + "\n"), std::string::npos) << r.out;
  EXPECT_EQ(std::stod(lrkit::h5::read_string_attributes(pods + "/log.h5", "/start").at("peak_flops")), 4e12);
}

// Machines that each read a run directory of their own (no shared filesystem) find different checkpoints under
// --resume auto: rank 0 its step-6 checkpoint, rank 1 none. Averaging the gradients of different weights would train
// garbage until the step counts part; every worker refuses before the first step instead, and the run's log is kept.
TEST(TrainCommand, WorkersThatFindDifferentCheckpointsAreRefusedBeforeTheyTrain) {
  const auto shared = out_dir("starts_rank0"), own = out_dir("starts_rank1");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 2 --checkpoint.every=6 --out " + shared).code, 0);
  ASSERT_TRUE(std::filesystem::remove(shared + "/checkpoints/step_0000000012.pt"));
  const auto rows = lrkit::h5::read_series(shared + "/log.h5", "/train/loss");
  const std::string port = std::to_string(29800 + getpid() % 100);
  const auto worker = [&](int rank, const std::string& out) {
    return pod_worker(rank, port) + LRKIT_BINARY + " train --config " + tiny_config() + " --resume auto --dist.timeout_s=60 --out " + out;
  };
  const auto r = run_both(worker(0, shared), worker(1, own));
  EXPECT_NE(r.code, 0) << r.out;
  const std::string refusal = "the workers start from different points: rank 1 differs from rank 0 (steps by rank: 6, 0; ";
  EXPECT_NE(r.out.find("lrkit train: " + refusal + "rank 0 here: step 6, resume from " + shared +
                       "/checkpoints/step_0000000006.pt, crc32:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lrkit train: " + refusal + "rank 1 here: step 0, fresh, no checkpoint); every worker must read "
                       "the same run directory and checkpoint: put --out (and any --resume, --branch-from or "
                       "--init-from file) on a filesystem that every machine mounts\n"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("step    "), std::string::npos) << "no step trained:\n" << r.out;
  EXPECT_EQ(r.out.find("resumed from"), std::string::npos) << "no resume is announced:\n" << r.out;
  EXPECT_EQ(lrkit::h5::read_series(shared + "/log.h5", "/train/loss"), rows);
}

// A machine with another copy of the config (or other options) would train another model, rate or batch under
// the same all-reduce; every worker refuses at the rendezvous, naming the keys with its own values.
TEST(TrainCommand, WorkersStartedWithOtherSettingsAreRefusedBeforeTheyTrain) {
  const auto dir = out_dir("settings_apart");
  const std::string port = std::to_string(29500 + getpid() % 100);
  const auto worker = [&](int rank, const std::string& options) {
    return pod_worker(rank, port) + LRKIT_BINARY + " train --config " + tiny_config() + options + " --dist.timeout_s=60 --out " + dir;
  };
  const auto r = run_both(worker(0, ""), worker(1, " --optim.beta2=0.99 --train.threads=2"));
  EXPECT_NE(r.code, 0) << r.out;
  const std::string head = "lrkit train: the workers run with different settings: rank 1 differs from rank 0 in optim.beta2 = ";
  const std::string tail = "'s values); start every worker with the same config file and options\n";
  EXPECT_NE(r.out.find(head + "0.95 (rank 0" + tail), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(head + "0.99 (rank 1" + tail), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("step    "), std::string::npos) << "no step trained:\n" << r.out;
}

// A refusal one worker alone meets: rank 0's run directory holds an earlier run (the lock and the overwrite are rank
// 0's), or rank 1's machine lacks the data file. The other worker waited for it at the rendezvous until
// dist.timeout_s, then failed with "The client socket has timed out after 60s" and exit 1; now both refuse at once,
// and the one that did not refuse names the rank and its reason.
TEST(TrainCommand, AWorkerThatRefusesToStartAloneStopsTheOthersAtOnceNamingIt) {
  const auto dir = out_dir("refused_alone");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --out " + dir).code, 0);
  const std::string port = std::to_string(29600 + getpid() % 100);
  const auto worker = [&](int rank, const std::string& options) {
    return pod_worker(rank, port) + LRKIT_BINARY + " train --config " + tiny_config() + options +
           " --dist.timeout_s=120 --out " + dir;
  };
  const std::string held = "run directory '" + dir + "' holds an earlier run (log.h5 or checkpoints); continue it with "
                           "--resume auto, move it aside with --overwrite, or choose another --out\n";
  const auto locked = run_both(worker(0, ""), worker(1, ""));
  EXPECT_NE(locked.code, 0);
  EXPECT_EQ(locked.out, "lrkit train: " + held + "lrkit train: rank 0 refused to start: " + held);
  const auto missing = run_both(worker(0, " --overwrite"), worker(1, " --overwrite --data.path=/nonexistent/corpus.txt"));
  EXPECT_NE(missing.code, 0);
  const std::string absent = "data file '/nonexistent/corpus.txt' does not exist or cannot be reached\n";
  EXPECT_NE(missing.out.find("lrkit train: rank 1 refused to start: " + absent), std::string::npos) << missing.out;
  EXPECT_NE(missing.out.find("lrkit train: " + absent), std::string::npos) << missing.out;
  EXPECT_EQ(missing.out.find("timed out"), std::string::npos) << missing.out;
  // Rank 0's --overwrite moved the earlier run aside before it learned that rank 1 refused; it waits for the job now.
  const auto asides = [&] {
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(fs::path(dir).parent_path()))
      if (entry.path().filename().string().rfind("refused_alone.old-", 0) == 0) found.push_back(entry.path());
    return found;
  };
  EXPECT_TRUE(asides().empty()) << "a refused job moved the earlier run aside";
  EXPECT_TRUE(fs::exists(dir + "/log.h5")) << "a refused job moved the earlier run aside";
  const auto overwritten = run_both(worker(0, " --overwrite"), worker(1, " --overwrite"));
  EXPECT_EQ(overwritten.code, 0) << overwritten.out;
  EXPECT_NE(overwritten.out.find("moved the earlier run in " + dir + " to " + dir + ".old-"), std::string::npos)
      << overwritten.out;
  const auto moved = asides();
  ASSERT_EQ(moved.size(), 1u) << overwritten.out;
  EXPECT_TRUE(fs::exists(moved.front() / "log.h5"));
  lrkit::testing::remove_tree(moved.front());
}

// A batch script's own process is no srun task: with its allocation's SLURM_NTASKS > 1 it is refused in one line (it
// waited for the absent tasks until the rendezvous timed out), and --nproc starts the workers there. Where a launcher
// started several, --nproc must agree with it (it trained with one worker).
TEST(TrainCommand, NprocStartsWorkersInABatchScriptAndMustAgreeWithAnyOtherLauncher) {
  const auto local = out_dir("nproc_plain"), batch = out_dir("nproc_sbatch");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --nproc 2 --out " + local).code, 0);
  const std::string batch_script = "env -u RANK -u WORLD_SIZE -u SLURM_STEP_NUM_TASKS SLURM_PROCID=0 SLURM_LOCALID=0 "
                                   "SLURM_NTASKS=8 SLURM_TASKS_PER_NODE='4(x2)' ";
  const auto alone = run_command(batch_script + LRKIT_BINARY + " train --config " + tiny_config() + " --out " +
                                 out_dir("nproc_sbatch_alone"));
  EXPECT_EQ(alone.code, 2) << alone.out;
  EXPECT_EQ(alone.out, "lrkit train: SLURM_NTASKS=8 but srun did not start this process (no SLURM_STEP_NUM_TASKS): a "
                       "batch script's own process is one task, and the other 7 would never come; start the workers "
                       "with srun (srun lrkit train ...; srun -n 1 for one), or N >= 2 on this node with --nproc N\n");
  const auto r = run_command(batch_script + LRKIT_BINARY + " train --config " + tiny_config() + " --nproc 2 --out " + batch);
  ASSERT_EQ(r.code, 0) << r.out;
  expect_same_run(local, batch, "2");
  // Each worker below is alone (its job's others are not started here): it waits dist.timeout_s for them to hear why.
  const auto slurm = run_command(srun_task(0, 2, 4, 2) + LRKIT_BINARY + " train --config " + tiny_config() +
                                 " --nproc 2 --dist.timeout_s=1 --out " + out_dir("nproc_srun"));
  EXPECT_EQ(slurm.code, 2) << slurm.out;
  EXPECT_EQ(slurm.out, "lrkit train: --nproc 2 but SLURM started this process as one of 4 worker(s) on this node "
                       "(SLURM_STEP_NUM_TASKS=8): the launcher starts the workers; drop --nproc, or run lrkit with "
                       "--nproc in a one-task step (srun -n 1)\n");
  const auto torchrun = run_command("env -u SLURM_PROCID RANK=0 WORLD_SIZE=2 LOCAL_RANK=0 LOCAL_WORLD_SIZE=2 "
                                    "MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 " + std::string(LRKIT_BINARY) + " train --config " +
                                    tiny_config() + " --nproc 4 --dist.timeout_s=1 --out " + out_dir("nproc_torchrun"));
  EXPECT_EQ(torchrun.code, 2) << torchrun.out;
  EXPECT_EQ(torchrun.out, "lrkit train: --nproc 4 but torchrun started this process as one of 2 worker(s) on this node "
                          "(LOCAL_WORLD_SIZE=2): the launcher starts the workers; drop --nproc\n");
  // RANK and WORLD_SIZE alone say nothing of this machine's workers: --nproc equal to WORLD_SIZE is no agreement.
  const auto pod = run_command("env -u SLURM_PROCID -u LOCAL_RANK -u LOCAL_WORLD_SIZE RANK=1 WORLD_SIZE=2 "
                               "MASTER_ADDR=127.0.0.1 MASTER_PORT=29999 " + std::string(LRKIT_BINARY) + " train --config " +
                               tiny_config() + " --nproc 2 --dist.timeout_s=1 --out " + out_dir("nproc_pod"));
  EXPECT_EQ(pod.code, 2) << pod.out;
  EXPECT_EQ(pod.out, "lrkit train: --nproc 2 but a launcher started this process as RANK=1 of WORLD_SIZE=2 (without "
                     "LOCAL_WORLD_SIZE, as Kubeflow's PyTorchJob starts a worker per pod): the launcher starts the "
                     "workers; drop --nproc, or start several workers per machine with torchrun --nproc_per_node\n");
}

// srun tasks may each see a GPU of their own, so their view does not refuse NCCL; the rendezvous does when two tasks
// share one. On one GPU both tasks see it: every task exits 2 before NCCL starts, and rank 0 names the GPU.
class SrunOnOneGpu : public lrkit::testing::OnDevice {};

TEST_P(SrunOnOneGpu, TasksSharingAGpuAreRefusedBeforeNcclStarts) {
#ifndef LRKIT_WITH_CUDA
  GTEST_SKIP() << "this lrkit was built without CUDA, so without NCCL";
#else
  const auto task = [&](int id) {
    return srun_task(id, 1, 2, 3) + "CUDA_VISIBLE_DEVICES=0 " + LRKIT_BINARY + " train --config " + tiny_config() +
           " --train.device=cuda --dist.timeout_s=60 --out " + out_dir("srun_shared_gpu");
  };
  const auto r = run_both(task(0), task(1));
  EXPECT_NE(r.code, 0) << r.out;
  const auto named = r.out.find("lrkit train: ranks 0, 1 train on one GPU (");
  EXPECT_NE(named, std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("train on one GPU"), r.out.find("train on one GPU")) << "once, by rank 0:\n" << r.out;
  EXPECT_EQ(r.out.find("terminate"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NCCL needs a GPU of its own per worker"), std::string::npos) << r.out;
#endif
}

// A Gloo rank and an NCCL rank never meet in one group: each would wait out dist.timeout_s in its own rendezvous.
// The backends are compared in the store first, and every task exits 2; rank 0 names the ranks of each backend.
TEST_P(SrunOnOneGpu, TasksWithDifferentBackendsAreRefusedBeforeEitherGroupStarts) {
#ifndef LRKIT_WITH_CUDA
  GTEST_SKIP() << "this lrkit was built without CUDA, so without NCCL";
#else
  const auto task = [&](int id, const std::string& backend) {
    return srun_task(id, 1, 2, 4) + "CUDA_VISIBLE_DEVICES=0 " + LRKIT_BINARY + " train --config " + tiny_config() +
           " --train.device=cuda --dist.backend=" + backend + " --dist.timeout_s=60 --out " + out_dir("srun_two_backends");
  };
  const auto r = run_both(task(0, "auto"), task(1, "gloo"));
  EXPECT_NE(r.code, 0) << r.out;
  const std::string line = "lrkit train: the workers use different process-group backends (rank 0 uses nccl; rank 1 "
                           "uses gloo): give every worker the same dist.backend";
  EXPECT_NE(r.out.find(line), std::string::npos) << r.out;
  EXPECT_EQ(r.out.rfind("different process-group backends"), r.out.find("different process-group backends"))
      << "once, by rank 0:\n" << r.out;
  EXPECT_EQ(r.out.find("rendezvous"), std::string::npos) << "refused before either group waited:\n" << r.out;
#endif
}

INSTANTIATE_TEST_SUITE_P(Cuda, SrunOnOneGpu, ::testing::Values(std::string("cuda")));

// Under torchrun every worker checked the same config, data file and checkpoint and printed the same refusal: on 8 GPUs,
// 8 lines. Now each machine's first worker (LOCAL_RANK 0) reports it; the others exit 2 without a word. A worker that
// cannot tell its machine's first (no LOCAL_RANK and LOCAL_WORLD_SIZE) reports it. Every worker refuses, so each
// exits at once: none waits at the rendezvous for the others.
TEST(TrainCommand, ARefusalIsReportedByEachMachinesFirstWorkerOrByEveryWorkerThatCannotTellIt) {
  const auto damaged_checkpoint = lrkit::testing::write_text("damaged.pt", "not a checkpoint\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {" --data.path=/nonexistent/corpus.txt",
       "lrkit train: data file '/nonexistent/corpus.txt' does not exist or cannot be reached\n"},
      {" --optim.beta1=1.5", "lrkit train: optim.beta1 must be in [0, 1) (got 1.5)\n"},
      {" --resume " + damaged_checkpoint,
       "lrkit train: '" + damaged_checkpoint + "' is not an lrkit checkpoint (no 'lrkit-checkpoint 2' header)\n"}};
  const std::string port = std::to_string(29400 + getpid() % 100);
  for (const auto& [option, message] : cases) {
    // Two machines of two workers: ranks 0 and 2 are their machines' first.
    std::vector<std::string> workers;
    for (int rank = 0; rank < 4; ++rank)
      workers.push_back("env RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank % 2) +
                        " WORLD_SIZE=4 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " " +
                        std::string(LRKIT_BINARY) + " train --config " + tiny_config() + option +
                        " --dist.timeout_s=120 --out " + out_dir("torchrun_refusal"));
    const auto job = run_together(workers);
    for (int rank = 0; rank < 4; ++rank) {
      EXPECT_EQ(job[rank].code, 2) << "rank " << rank << option << "\n" << job[rank].out;
      EXPECT_EQ(job[rank].out, rank % 2 == 0 ? message : "") << "rank " << rank << option;
    }
    // RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob, a pod per worker, each pod's log its own): every worker says it.
    const auto pods = run_together({pod_worker(0, port) + LRKIT_BINARY + " train --config " + tiny_config() + option +
                                        " --dist.timeout_s=120 --out " + out_dir("pod_refusal"),
                                    pod_worker(1, port) + LRKIT_BINARY + " train --config " + tiny_config() + option +
                                        " --dist.timeout_s=120 --out " + out_dir("pod_refusal")});
    for (const auto& pod : pods) {
      EXPECT_EQ(pod.code, 2) << option << "\n" << pod.out;
      EXPECT_EQ(pod.out, message) << option;
    }
  }
  // --resume auto's newest checkpoint, damaged: refused by the first worker before the workers meet too.
  const auto run = out_dir("torchrun_damaged_newest");
  ASSERT_EQ(run_lrkit("train --config " + tiny_config() + " --checkpoint.at=6 --out " + run).code, 0);
  const auto newest = run + "/checkpoints/step_0000000009.pt";
  std::filesystem::rename(run + "/checkpoints/step_0000000012.pt", newest);
  std::filesystem::resize_file(newest, 1000);
  std::vector<std::string> workers;
  for (int rank = 0; rank < 2; ++rank)
    workers.push_back("env RANK=" + std::to_string(rank) + " LOCAL_RANK=" + std::to_string(rank) +
                      " WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " " +
                      std::string(LRKIT_BINARY) + " train --config " + tiny_config() +
                      " --dist.timeout_s=120 --resume auto --out " + run);
  const auto job = run_together(workers);
  EXPECT_EQ(job[0].code, 2) << job[0].out;
  EXPECT_EQ(job[0].out.rfind("lrkit train: checkpoint '" + newest + "' is truncated or extended", 0), 0u) << job[0].out;
  EXPECT_EQ(lrkit::testing::count_lines(job[0].out), 1) << job[0].out;
  EXPECT_EQ(job[1].code, 2) << job[1].out;
  EXPECT_EQ(job[1].out, "");
}

}  // namespace
