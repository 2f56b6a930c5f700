// Who started this process, and where its peers are: torchrun's variables, an
// srun step's, or none (one process). Read once at start-up.
#pragma once

#include <string>

namespace lrkit::distributed {

struct DistributedEnv {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;
  // Whether local_world_size was told (LOCAL_WORLD_SIZE, an srun step's counts, one process): a launcher that sets
  // RANK and WORLD_SIZE alone (Kubeflow's PyTorchJob, one worker per pod) leaves it at WORLD_SIZE, which does not
  // mean one machine.
  bool local_world_size_known = true;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  std::string launcher;  // "torchrun" (RANK set), "slurm" (SLURM_PROCID set, RANK not) or "" (one process)
  // SLURM without an srun step: the process of a batch script (or of salloc's shell on a node), the one process
  // SLURM started. Its allocation's SLURM_NTASKS tasks exist only once srun starts them: this is that count (1 where
  // SLURM_NTASKS is unset), 0 in an srun task or outside SLURM.
  int slurm_allocated_tasks = 0;
  // Who hosts the rendezvous store at master_addr:master_port: rank 0 (false),
  // or the launcher, which the workers join as clients: torchrun's agent
  // (TORCHELASTIC_USE_AGENT_STORE=True; keys under store_prefix) or lrkit's own
  // (LRKIT_LAUNCHER_STORE=1, launcher_store.hpp).
  bool store_hosted_by_launcher = false;
  std::string store_prefix;  // "/worker/attempt_<TORCHELASTIC_RESTART_COUNT>" under torchrun's agent, else ""
};

// torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
// MASTER_ADDR, MASTER_PORT) where RANK is set. Else, with SLURM_PROCID set, an
// srun task (SLURM_STEP_NUM_TASKS set) reads its step's: SLURM_PROCID,
// SLURM_STEP_NUM_TASKS, SLURM_LOCALID, and this node's entry of
// SLURM_STEP_TASKS_PER_NODE (SLURM_STEP_NODEID). Not the allocation's
// SLURM_NTASKS: a batch script's process has it too, and `srun -E`
// (--preserve-env) keeps it in a smaller step. MASTER_ADDR defaults to the
// step's first node (SLURM_STEP_NODELIST; srun places task 0 there unless
// --distribution=arbitrary), MASTER_PORT to a port of the job and step
// (slurm_master_port). A SLURM process without a step is a one-process run
// (slurm_allocated_tasks). None of these: a single process. Throws
// std::invalid_argument naming the variable and its value when one is
// malformed or missing.
DistributedEnv distributed_env_from_environment();

// The first host of a SLURM host list ("gpu[07-09,12],cpu3" -> "gpu07"); throws std::invalid_argument for an empty
// or malformed list.
std::string first_slurm_host(const std::string& hostlist);

// The rendezvous port of an srun step without MASTER_PORT: 20000 + 10 x (job % 1000) + step % 10. Below Linux's
// ephemeral ports (32768 on), and apart for two jobs sharing a node unless their ids end in the same 3 digits, and
// for up to 10 concurrent steps of one job.
int slurm_master_port(long job_id, long step_id);

}  // namespace lrkit::distributed
