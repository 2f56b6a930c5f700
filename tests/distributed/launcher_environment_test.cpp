// What distributed_env_from_environment reads: torchrun's variables, an srun
// step's (a batch script's own process is no step), and who hosts the
// rendezvous store.
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "lrkit/distributed/launcher_environment.hpp"
#include "lrkit/distributed/launcher_store.hpp"
#include "lrkit/common/scoped_environment.hpp"

namespace lrkit::distributed {
namespace {

using lrkit::common::ScopedEnvironment;
using lrkit::common::Variables;

const Variables kTwoWorkers = {
    {"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "1"}, {"LOCAL_WORLD_SIZE", "2"}, {"MASTER_ADDR", "127.0.0.1"},
    {"MASTER_PORT", "29611"}, {"SLURM_PROCID", std::nullopt}, {"TORCHELASTIC_USE_AGENT_STORE", std::nullopt},
    {"TORCHELASTIC_RESTART_COUNT", std::nullopt}, {kLauncherStoreVariable, std::nullopt}};

// `base` with `changes` set or unset on top.
Variables with(Variables base, const Variables& changes) {
  for (const auto& [name, value] : changes) base[name] = value;
  return base;
}

Variables two_workers_and(const Variables& changes) { return with(kTwoWorkers, changes); }

TEST(DistributedEnv, RankZeroHostsTheStoreByDefault) {
  const ScopedEnvironment environment(kTwoWorkers);
  const auto env = distributed_env_from_environment();
  EXPECT_EQ(env.launcher, "torchrun");
  EXPECT_EQ(env.rank, 1);
  EXPECT_EQ(env.world_size, 2);
  EXPECT_EQ(env.master_port, 29611);
  EXPECT_FALSE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "");
}

// A launcher that sets RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob) does not say how many workers share a machine.
TEST(DistributedEnv, WithoutLocalWorldSizeTheMachinesWorkersAreUnknown) {
  EXPECT_TRUE([] {
    const ScopedEnvironment environment(kTwoWorkers);
    return distributed_env_from_environment().local_world_size_known;
  }());
  const ScopedEnvironment environment(two_workers_and({{"LOCAL_RANK", std::nullopt}, {"LOCAL_WORLD_SIZE", std::nullopt}}));
  const auto env = distributed_env_from_environment();
  EXPECT_FALSE(env.local_world_size_known);
  EXPECT_EQ(env.local_world_size, 2);
  const ScopedEnvironment alone(Variables{{"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}, {"SLURM_PROCID", std::nullopt}});
  EXPECT_TRUE(distributed_env_from_environment().local_world_size_known);  // one process
}

TEST(DistributedEnv, TorchrunsAgentStoreIsJoinedUnderTheAttemptsPrefix) {
  const ScopedEnvironment environment(
      two_workers_and({{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "2"}}));
  const auto env = distributed_env_from_environment();
  EXPECT_TRUE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "/worker/attempt_2");
}

TEST(DistributedEnv, LrkitsLauncherStoreIsJoinedWithoutAPrefix) {
  const ScopedEnvironment environment(two_workers_and({{kLauncherStoreVariable, "1"}}));
  const auto env = distributed_env_from_environment();
  EXPECT_TRUE(env.store_hosted_by_launcher);
  EXPECT_EQ(env.store_prefix, "");
}

TEST(DistributedEnv, AMalformedRestartCountIsNamed) {
  const ScopedEnvironment environment(
      two_workers_and({{"TORCHELASTIC_USE_AGENT_STORE", "True"}, {"TORCHELASTIC_RESTART_COUNT", "x"}}));
  try {
    distributed_env_from_environment();
    FAIL() << "a restart count that is no integer must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("TORCHELASTIC_RESTART_COUNT='x'"), std::string::npos) << e.what();
  }
}

// An srun task of a 2-node step with 4 and 3 tasks, as slurmstepd sets it up, inside an allocation of 16 tasks.
const Variables kSrunTask = {
    {"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}, {"LOCAL_RANK", std::nullopt}, {"LOCAL_WORLD_SIZE", std::nullopt},
    {"MASTER_ADDR", std::nullopt}, {"MASTER_PORT", std::nullopt}, {"TORCHELASTIC_USE_AGENT_STORE", std::nullopt},
    {kLauncherStoreVariable, std::nullopt}, {"SLURM_NTASKS", "16"}, {"SLURM_TASKS_PER_NODE", "8(x2)"},
    {"SLURM_NTASKS_PER_NODE", "8"}, {"SLURM_PROCID", "5"}, {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "1"},
    {"SLURM_STEP_NODEID", "1"}, {"SLURM_STEP_NUM_TASKS", "7"}, {"SLURM_STEP_TASKS_PER_NODE", "4,3"},
    {"SLURM_STEP_NODELIST", "gpu[007-008]"}, {"SLURM_JOB_ID", "123456"}, {"SLURM_STEP_ID", "2"}};

Variables srun_task_and(const Variables& changes) { return with(kSrunTask, changes); }

std::string refusal(const Variables& variables) {
  const ScopedEnvironment environment(variables);
  try {
    distributed_env_from_environment();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(accepted)";
}

// The step's variables, not the allocation's (`srun -E -n 7` in a 16-task allocation keeps SLURM_NTASKS=16, and a
// batch script's process has it); this node's count is its own entry of the step's list.
TEST(DistributedEnv, AnSrunTaskReadsItsStepNotTheAllocation) {
  const ScopedEnvironment environment(kSrunTask);
  const auto env = distributed_env_from_environment();
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.world_size, 7);
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.local_world_size, 3);
  EXPECT_EQ(env.slurm_allocated_tasks, 0);
  EXPECT_EQ(env.master_addr, "gpu007");  // the step's first node: task 0's
  EXPECT_EQ(env.master_port, slurm_master_port(123456, 2));
  EXPECT_EQ(env.master_port, 20000 + 4560 + 2);
}

TEST(DistributedEnv, MasterAddrAndPortOverrideTheStepsDefaults) {
  const ScopedEnvironment environment(srun_task_and({{"MASTER_ADDR", "10.0.0.9"}, {"MASTER_PORT", "29611"}}));
  const auto env = distributed_env_from_environment();
  EXPECT_EQ(env.master_addr, "10.0.0.9");
  EXPECT_EQ(env.master_port, 29611);
}

TEST(DistributedEnv, TasksPerNodeRepeatsAreExpanded) {
  for (const auto& [list, node, count] : std::vector<std::tuple<std::string, std::string, int>>{
           {"4(x2),3", "0", 4}, {"4(x2),3", "1", 4}, {"4(x2),3", "2", 3}, {"2,1(x3)", "3", 1}, {"7", "0", 7}}) {
    const ScopedEnvironment environment(
        srun_task_and({{"SLURM_STEP_TASKS_PER_NODE", list}, {"SLURM_STEP_NODEID", node}, {"SLURM_LOCALID", "0"}}));
    EXPECT_EQ(distributed_env_from_environment().local_world_size, count) << list << " node " << node;
  }
  // Without SLURM_STEP_NODEID, SLURM_NODEID; without the list, the whole step is on this node.
  const ScopedEnvironment environment(srun_task_and({{"SLURM_STEP_NODEID", std::nullopt}, {"SLURM_NODEID", "0"}}));
  EXPECT_EQ(distributed_env_from_environment().local_world_size, 4);
  const ScopedEnvironment no_list(srun_task_and({{"SLURM_STEP_TASKS_PER_NODE", std::nullopt}}));
  EXPECT_EQ(distributed_env_from_environment().local_world_size, 7);
}

TEST(DistributedEnv, MalformedStepVariablesAreNamed) {
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_TASKS_PER_NODE", "4(2),3"}})),
            "environment variable SLURM_STEP_TASKS_PER_NODE='4(2),3' is not a task count per node such as 4(x2),3");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_TASKS_PER_NODE", "4,"}})),
            "environment variable SLURM_STEP_TASKS_PER_NODE='4,' is not a task count per node such as 4(x2),3");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_NODEID", "2"}})),
            "SLURM_STEP_NODEID=2 but SLURM_STEP_TASKS_PER_NODE='4,3' lists 2 node(s)");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_LOCALID", "3"}})),
            "SLURM_LOCALID=3 is not below this node's 3 task(s) of the step (SLURM_STEP_TASKS_PER_NODE)");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_PROCID", "7"}})), "SLURM_PROCID=7 is not below SLURM_STEP_NUM_TASKS=7");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_NUM_TASKS", "seven"}})),
            "environment variable SLURM_STEP_NUM_TASKS='seven' is not an integer >= 1");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_NODELIST", std::nullopt}})),
            "SLURM_STEP_NUM_TASKS=7 but neither MASTER_ADDR nor SLURM_STEP_NODELIST is set: export MASTER_ADDR=(the "
            "host of task 0) before srun");
  EXPECT_EQ(refusal(srun_task_and({{"SLURM_STEP_NODELIST", "gpu[007-008"}})),
            "environment variable SLURM_STEP_NODELIST: SLURM host list 'gpu[007-008' is malformed: expected names "
            "such as node[01-04,07]");
}

// A batch script's process has SLURM_PROCID=0 and its allocation's SLURM_NTASKS but no step: SLURM started it alone,
// so it is no rank of SLURM_NTASKS (it once waited for the absent others until the rendezvous timed out).
TEST(DistributedEnv, ABatchScriptsProcessIsOneProcessWithItsAllocationsTaskCount) {
  const ScopedEnvironment environment(
      {{"RANK", std::nullopt}, {"WORLD_SIZE", std::nullopt}, {"MASTER_ADDR", std::nullopt}, {"MASTER_PORT", std::nullopt},
       {"SLURM_PROCID", "0"}, {"SLURM_LOCALID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_TASKS_PER_NODE", "4(x2)"},
       {"SLURM_STEP_NUM_TASKS", std::nullopt}, {"SLURM_STEP_TASKS_PER_NODE", std::nullopt}});
  const auto env = distributed_env_from_environment();
  EXPECT_EQ(env.launcher, "slurm");
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
  EXPECT_EQ(env.local_world_size, 1);
  EXPECT_EQ(env.slurm_allocated_tasks, 8);
  const ScopedEnvironment one_task(Variables{{"SLURM_NTASKS", std::nullopt}});
  EXPECT_EQ(distributed_env_from_environment().slurm_allocated_tasks, 1);
}

TEST(SlurmHostList, TheFirstHostKeepsItsZeroPadding) {
  EXPECT_EQ(first_slurm_host("node1"), "node1");
  EXPECT_EQ(first_slurm_host("node1,node2"), "node1");
  EXPECT_EQ(first_slurm_host("gpu[007-009,012],cpu3"), "gpu007");
  EXPECT_EQ(first_slurm_host("gpu[12,3-4]"), "gpu12");
  EXPECT_EQ(first_slurm_host("rack[2-3]-n[01-04]"), "rack2-n01");
  EXPECT_EQ(first_slurm_host("n[5]x"), "n5x");
  for (const std::string bad : {"", ",node1", "gpu[-3]", "gpu[a-b]", "gpu]1", "gpu[1-2"}) {
    try {
      first_slurm_host(bad);
      ADD_FAILURE() << "'" << bad << "' accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "SLURM host list '" + bad + "' is malformed: expected names such as node[01-04,07]");
    }
  }
}

TEST(SlurmMasterPort, JobsAndStepsGetPortsApartBelowTheEphemeralRange) {
  EXPECT_EQ(slurm_master_port(0, 0), 20000);
  EXPECT_EQ(slurm_master_port(999, 9), 29999);
  EXPECT_NE(slurm_master_port(1000, 0), slurm_master_port(1001, 0));
  EXPECT_NE(slurm_master_port(1000, 0), slurm_master_port(1000, 1));
}

}  // namespace
}  // namespace lrkit::distributed
