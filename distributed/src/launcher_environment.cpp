#include "lrkit/distributed/launcher_environment.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/distributed/launcher_store.hpp"

namespace lrkit::distributed {

namespace {

bool has_env(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0';
}

long long_from_env(const char* name, long fallback, long min_value, long max_value) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < min_value || value > max_value)
    throw std::invalid_argument(std::string("environment variable ") + name + "='" + text +
                                "' is not an integer >= " + std::to_string(min_value));
  return value;
}

int int_from_env(const char* name, int fallback, int min_value) {
  return static_cast<int>(long_from_env(name, fallback, min_value, 1 << 20));
}

// A task count per node as SLURM writes it, "4(x2),3": 4, 4 and 3 tasks on the step's nodes 0, 1 and 2.
std::vector<int> tasks_per_node(const char* name) {
  const std::string text = std::getenv(name);
  const auto malformed = [&] {
    return std::invalid_argument(std::string("environment variable ") + name + "='" + text +
                                 "' is not a task count per node such as 4(x2),3");
  };
  std::vector<int> counts;
  const char* at = text.c_str();
  while (true) {
    char* end = nullptr;
    const long count = std::strtol(at, &end, 10);
    if (end == at || count < 1 || count > 1 << 20) throw malformed();
    long repeats = 1;
    if (*end == '(') {
      if (end[1] != 'x') throw malformed();
      at = end + 2;
      repeats = std::strtol(at, &end, 10);
      if (end == at || *end != ')' || repeats < 1 || repeats > 1 << 20) throw malformed();
      ++end;
    }
    counts.insert(counts.end(), static_cast<size_t>(repeats), static_cast<int>(count));
    if (*end == '\0') return counts;
    if (*end != ',') throw malformed();
    at = end + 1;
  }
}

// This node's tasks in the step: its entry of SLURM_STEP_TASKS_PER_NODE. Without the variable, the whole step.
int slurm_step_tasks_on_this_node(int world_size) {
  if (!has_env("SLURM_STEP_TASKS_PER_NODE")) return world_size;
  const std::vector<int> counts = tasks_per_node("SLURM_STEP_TASKS_PER_NODE");
  const char* node_variable = has_env("SLURM_STEP_NODEID") ? "SLURM_STEP_NODEID" : "SLURM_NODEID";
  const int node = int_from_env(node_variable, 0, 0);
  if (static_cast<size_t>(node) >= counts.size())
    throw std::invalid_argument(std::string(node_variable) + "=" + std::to_string(node) +
                                " but SLURM_STEP_TASKS_PER_NODE='" + std::getenv("SLURM_STEP_TASKS_PER_NODE") +
                                "' lists " + std::to_string(counts.size()) + " node(s)");
  return counts[static_cast<size_t>(node)];
}

void read_srun_task(DistributedEnv& env) {
  env.launcher = "slurm";
  env.world_size = int_from_env("SLURM_STEP_NUM_TASKS", 1, 1);
  env.rank = int_from_env("SLURM_PROCID", 0, 0);
  env.local_rank = int_from_env("SLURM_LOCALID", 0, 0);
  env.local_world_size = slurm_step_tasks_on_this_node(env.world_size);
  if (env.local_rank >= env.local_world_size)
    throw std::invalid_argument("SLURM_LOCALID=" + std::to_string(env.local_rank) + " is not below this node's " +
                                std::to_string(env.local_world_size) + " task(s) of the step (SLURM_STEP_TASKS_PER_NODE)");
  if (env.world_size == 1) return;
  // Defaults, which MASTER_ADDR and MASTER_PORT override.
  if (!has_env("MASTER_ADDR")) {
    if (!has_env("SLURM_STEP_NODELIST"))
      throw std::invalid_argument("SLURM_STEP_NUM_TASKS=" + std::to_string(env.world_size) +
                                  " but neither MASTER_ADDR nor SLURM_STEP_NODELIST is set: export MASTER_ADDR=(the "
                                  "host of task 0) before srun");
    try {
      env.master_addr = first_slurm_host(std::getenv("SLURM_STEP_NODELIST"));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("environment variable SLURM_STEP_NODELIST: ") + e.what());
    }
  }
  env.master_port = slurm_master_port(long_from_env("SLURM_JOB_ID", 0, 0, 1L << 62),
                                      long_from_env("SLURM_STEP_ID", 0, 0, 1L << 62));
}

}  // namespace

std::string first_slurm_host(const std::string& hostlist) {
  const auto malformed = [&] {
    return std::invalid_argument("SLURM host list '" + hostlist + "' is malformed: expected names such as node[01-04,07]");
  };
  std::string host;
  size_t i = 0;
  while (i < hostlist.size() && hostlist[i] != ',') {
    if (hostlist[i] == ']') throw malformed();
    if (hostlist[i] != '[') {
      host += hostlist[i++];
      continue;
    }
    // A range group: its first number, zero padding kept ("[007-012]" -> "007").
    const size_t close = hostlist.find(']', i);
    if (close == std::string::npos) throw malformed();
    const size_t first_end = hostlist.find_first_of("-,]", i + 1);
    const std::string first = hostlist.substr(i + 1, first_end - i - 1);
    if (first.empty() || first.find_first_not_of("0123456789") != std::string::npos) throw malformed();
    host += first;
    i = close + 1;
  }
  if (host.empty()) throw malformed();
  return host;
}

int slurm_master_port(long job_id, long step_id) {
  return static_cast<int>(20000 + 10 * (job_id % 1000) + step_id % 10);
}

DistributedEnv distributed_env_from_environment() {
  DistributedEnv env;
  if (!has_env("RANK") && has_env("SLURM_PROCID")) {
    if (has_env("SLURM_STEP_NUM_TASKS")) {
      read_srun_task(env);
    } else {  // a batch script's own process: the tasks exist once srun starts them
      env.launcher = "slurm";
      env.slurm_allocated_tasks = int_from_env("SLURM_NTASKS", 1, 1);
    }
  } else {
    env.launcher = has_env("RANK") ? "torchrun" : "";
    env.world_size = int_from_env("WORLD_SIZE", 1, 1);
    env.rank = int_from_env("RANK", 0, 0);
    env.local_rank = int_from_env("LOCAL_RANK", env.rank, 0);
    env.local_world_size = int_from_env("LOCAL_WORLD_SIZE", env.world_size, 1);
    env.local_world_size_known = env.launcher.empty() || has_env("LOCAL_WORLD_SIZE");
  }
  if (has_env("MASTER_ADDR")) env.master_addr = std::getenv("MASTER_ADDR");
  env.master_port = int_from_env("MASTER_PORT", env.master_port, 1);
  if (env.rank >= env.world_size)
    throw std::invalid_argument((env.launcher == "slurm" ? "SLURM_PROCID=" : "RANK=") + std::to_string(env.rank) +
                                " is not below " + (env.launcher == "slurm" ? "SLURM_STEP_NUM_TASKS=" : "WORLD_SIZE=") +
                                std::to_string(env.world_size));
  if (env.master_port > 65535) throw std::invalid_argument("MASTER_PORT=" + std::to_string(env.master_port) + " is not a port");
  // torchrun's agent hosts the store on MASTER_PORT, its keys under the prefix PyTorch's env:// rendezvous uses.
  if (const char* agent = std::getenv("TORCHELASTIC_USE_AGENT_STORE"); agent != nullptr && std::string(agent) == "True") {
    env.store_hosted_by_launcher = true;
    env.store_prefix = "/worker/attempt_" + std::to_string(int_from_env("TORCHELASTIC_RESTART_COUNT", 0, 0));
  } else if (const char* lrkit = std::getenv(kLauncherStoreVariable); lrkit != nullptr && std::string(lrkit) == "1") {
    env.store_hosted_by_launcher = true;
  }
  return env;
}

}  // namespace lrkit::distributed
