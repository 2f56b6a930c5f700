// `lrkit train`: trains the reference GPT on a byte corpus.
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "child_process.hpp"
#include "command.hpp"
#include "libtorch_error.hpp"
#include "local_launcher.hpp"
#include "run_directory.hpp"
#include "lrkit/distributed/collective.hpp"
#include "lrkit/h5/handle.hpp"
#include "lrkit/schedules/spec_error.hpp"
#include "lrkit/train/byte_corpus.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/memory_need.hpp"
#include "lrkit/train/run_log.hpp"
#include "lrkit/train/trainer.hpp"
#include "lrkit/train/worker_placement.hpp"
#include "lrkit/train/worker_threads.hpp"

namespace lrkit::cli {

namespace {

// An allocation that failed is the run's size against the machine's memory: say which keys set that size.
std::string out_of_memory(const c10::Error& e, const train::TrainConfig& config) {
  return "out of memory on " + config.train.device.text() + " at model.context = " + std::to_string(config.model.context) +
         ", train.batch = " + std::to_string(config.train.batch) + ", train.accumulation = " +
         std::to_string(config.train.accumulation) + ": raise train.accumulation (smaller micro-batches, the same result) " +
         "or lower train.batch, model.context or the model's size (LibTorch: " + libtorch_message(e) + ")";
}

bool is_out_of_memory(const c10::Error& e) {
  // The CPU allocator's failure is a plain c10::Error; CUDA's caching allocator throws OutOfMemoryError.
  return dynamic_cast<const c10::OutOfMemoryError*>(&e) != nullptr ||
         std::string(e.what_without_backtrace()).find("can't allocate memory") != std::string::npos;
}

// glibc's malloc serves a block above its mmap threshold (128 KiB at start) with a fresh mapping that free returns
// to the kernel, and trims its heap's free top above its trim threshold: a training step's activations then fault
// their pages in anew every step (1,200 page faults a step for the quickstart model). glibc raises both thresholds
// itself once a large mapped block is freed; the whole-file corpus read used to free one, which made the trainer
// 15 % faster by accident. Set here on purpose (quickstart model: 403k page faults in 300 steps -> 30k, 40.5k ->
// 45.2k tokens/s). 32 MiB is the largest threshold glibc's own adjustment reaches; bigger blocks are mapped.
void keep_freed_memory_for_the_next_step() {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
#endif
}

// A torchrun agent passes a stop signal on to its workers, but one killed outright (SIGKILL, the OOM killer) cannot:
// its workers would train on as orphans, for days. They stop as the local launcher's do (its workers are its children
// too). torchrun starts a worker as its own child: a worker whose parent is gone lost its agent.
void stop_when_the_torchrun_agent_dies() {
  const pid_t agent = ::getppid();
  if (agent == 1 || !stop_when_the_parent_dies(agent))
    throw std::runtime_error("the torchrun agent that started this worker is gone (TORCHELASTIC_RUN_ID=" +
                             std::string(std::getenv("TORCHELASTIC_RUN_ID")) + "): not training without it");
}

// Standard error sent to /dev/null while it lives: LibTorch's store logs each connect that fails to stderr, which
// would follow the line that said why the worker refused, where the others never came.
class QuietStderr {
 public:
  QuietStderr() : saved_(::dup(STDERR_FILENO)) {
    std::cerr.flush();
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
  }
  ~QuietStderr() {
    if (saved_ < 0) return;
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
  }
  QuietStderr(const QuietStderr&) = delete;
  QuietStderr& operator=(const QuietStderr&) = delete;

 private:
  int saved_;
};

// How far a worker came before a failure: a refusal to start reaches the other workers of its job.
struct WorkerStart {
  std::optional<distributed::DistributedEnv> env;  // the launcher's variables, once read
  bool checked = false;                            // its checks passed: a failure from here on is no refusal
};

int train_command(const std::vector<std::string>& args, train::TrainConfig& config, WorkerStart& start) {
  train::TrainSummary summary;
  bool lead = true;
  try {
    const auto env = distributed::distributed_env_from_environment();  // torchrun's or SLURM's variables
    start.env = env;
    std::string help;
    if (!train::parse_train_config(args, config, help)) {
      std::cout << help;
      return kExitOk;
    }
    lead = env.rank == 0;
    // --nproc N starts N local workers, also in a one-task SLURM allocation (an sbatch script, srun -n 1): SLURM
    // started one process there. Where a launcher started this process as one of several workers, --nproc must
    // agree with it (it once trained with one worker, or waited for the absent tasks of an sbatch script).
    const bool launching = config.nproc > 1 && (env.launcher.empty() || (env.launcher == "slurm" && env.world_size == 1));
    if (!launching && env.slurm_allocated_tasks > 1)
      throw std::invalid_argument(
          "SLURM_NTASKS=" + std::to_string(env.slurm_allocated_tasks) + " but srun did not start this process (no "
          "SLURM_STEP_NUM_TASKS): a batch script's own process is one task, and the other " +
          std::to_string(env.slurm_allocated_tasks - 1) + " would never come; start the workers with srun (srun lrkit "
          "train ...; srun -n 1 for one), or N >= 2 on this node with --nproc N");
    if (config.nproc > 1 && !launching && !env.local_world_size_known)
      throw std::invalid_argument(
          "--nproc " + std::to_string(config.nproc) + " but a launcher started this process as RANK=" +
          std::to_string(env.rank) + " of WORLD_SIZE=" + std::to_string(env.world_size) +
          " (without LOCAL_WORLD_SIZE, as Kubeflow's PyTorchJob starts a worker per pod): the launcher starts the "
          "workers; drop --nproc, or start several workers per machine with torchrun --nproc_per_node");
    if (config.nproc > 1 && !launching && config.nproc != env.local_world_size)
      throw std::invalid_argument(
          "--nproc " + std::to_string(config.nproc) + " but " + (env.launcher == "slurm" ? "SLURM" : "torchrun") +
          " started this process as one of " + std::to_string(env.local_world_size) + " worker(s) on this node (" +
          (env.launcher == "slurm" ? "SLURM_STEP_NUM_TASKS=" + std::to_string(env.world_size)
                                   : "LOCAL_WORLD_SIZE=" + std::to_string(env.local_world_size)) +
          "): the launcher starts the workers; drop --nproc" +
          (env.launcher == "slurm" ? ", or run lrkit with --nproc in a one-task step (srun -n 1)" : ""));
    // The job's workers and this machine's: those our launcher will start, or those torchrun's or SLURM's started.
    const int64_t workers = launching ? config.nproc : env.world_size;
    const int local_workers = launching ? static_cast<int>(config.nproc) : env.local_world_size;
    // Devices, backend and the batch's split first: a worker count that cannot serve is refused before the run
    // directory is touched. lrkit's launcher starts its workers with this process's environment: they see its GPUs.
    try {
      train::place_worker(config, env.local_rank, local_workers, launching ? train::GpuView::node : train::gpu_view(env));
      config.validate_world(workers);  // once here, not once per worker
      config.learning_rate_schedule();  // a schedule no optimizer can apply, before the run directory is touched
      train::intra_op_threads(config.train.threads, env);  // more than the CPUs; a malformed LRKIT_CORES or SLURM_CPUS_PER_TASK
    } catch (const schedules::SpecError& e) {
      throw std::invalid_argument(config.placed_in_config_file("schedule.spec: " + std::string(e.what())));
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(config.placed_in_config_file(e.what()));
    }
    // Our launcher's workers inherit its lock and its checks; any other process
    // checks, and rank 0 owns the run directory.
    std::optional<RunDirectoryOwner> owner;
    if (std::getenv("LRKIT_RUN_LOCKED") == nullptr) {
      // A job's refusals come before its workers start or meet (a lone worker reads the checkpoint once, later).
      if (run_finished(config, launching || env.world_size > 1)) {
        if (const auto broken = nonfinite_final_evaluation(config))
          throw ExitCodeError(kExitDiverged, lead ? "the run in " + config.out + " finished at step " +
                                                        std::to_string(config.train.steps) + " already, diverged: its " +
                                                        *broken + " at the evaluation after the last step; nothing to do"
                                                  : "");
        if (lead) std::cout << "the run in " << config.out << " finished at step " << config.train.steps
                            << " already; nothing to do" << std::endl;
        return kExitOk;
      }
      // A missing data file, a resume of another run: before any worker starts or the run directory is touched.
      config.check_data_files();
      // A model too large for the memory is refused here, not killed by the kernel while it builds its weights.
      train::require_memory(config, workers, local_workers);
      if (!config.resume.empty()) train::require_the_logged_settings(config, workers);
      if (lead) owner.emplace(config);
    }
    // Moving an earlier run aside (--overwrite) waits until the job's workers agreed to start; our launcher's
    // workers make the same checks as itself.
    const auto clear_earlier_run = [&owner] {
      if (owner) owner->clear_earlier_run(std::cout);
    };
    if (launching) {
      clear_earlier_run();
      return launch_local_workers(args, static_cast<int>(config.nproc));
    }
    start.checked = true;  // what fails from here on (an agent gone, the training) is no refusal to share
    if (std::getenv("TORCHELASTIC_RUN_ID") != nullptr) stop_when_the_torchrun_agent_dies();
    keep_freed_memory_for_the_next_step();
    summary = train::run_training(config, std::cout, clear_earlier_run);
  } catch (const schedules::SpecError& e) {
    throw UsageError(std::string("schedule.spec: ") + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  } catch (const train::CorpusError& e) {
    throw UsageError(e.what());
  } catch (const train::DataFileChangedError& e) {  // a failure at run time; empty where another worker says it
    throw ExitCodeError(kExitFailure, e.what());
  } catch (const h5::WriteError& e) {  // a full disk is no bad input: exit 1
    throw std::runtime_error(e.what());
  } catch (const h5::Error& e) {  // a damaged log of the run to resume
    throw UsageError(e.what());
  } catch (const train::CheckpointWriteError& e) {  // likewise
    throw std::runtime_error(e.what());
  } catch (const train::CheckpointError& e) {  // a damaged --resume PATH: every worker reads the same file
    throw UsageError(e.what());
  } catch (const train::DivergedError& e) {
    throw ExitCodeError(kExitDiverged, e.what());
  } catch (const train::StoppedError& e) {
    throw ExitCodeError(128 + e.signal(), e.what());  // a shell's code for a process a signal ended
  } catch (const c10::Error& e) {
    if (is_out_of_memory(e)) throw std::runtime_error(out_of_memory(e, config));
    throw;
  }
  if (!lead) return kExitOk;
  std::cout << "done: " << summary.steps << " steps in " << summary.seconds << " s, "
            << static_cast<long long>(summary.tokens_per_second) << " tok/s; final train loss " << summary.final_loss;
  if (summary.final_eval_losses.size() == 1) {
    std::cout << ", held-out loss " << summary.final_eval_loss;
  } else {
    for (const auto& [set, loss] : summary.final_eval_losses) std::cout << ", " << set << " loss " << loss;
  }
  std::cout << "\nrun log: " << summary.log_path << "\ncheckpoint: " << summary.checkpoint << std::endl;
  return kExitOk;
}

}  // namespace

int run_train_command(const std::vector<std::string>& args) {
  train::TrainConfig config;
  WorkerStart start;
  try {
    return train_command(args, config, start);
  } catch (const std::exception& e) {
    if (start.checked || !start.env || start.env->world_size == 1) throw;
    // Until training starts, every process of a torchrun or srun job checks the same config and files: each
    // machine's first worker (LOCAL_RANK 0) reports a refusal, the others exit 2 without a word (8 workers printed 8
    // lines). Where the launcher does not say which workers share a machine (RANK and WORLD_SIZE alone, Kubeflow's
    // PyTorchJob: a pod each, whose logs are read apart), every worker reports it.
    const auto* exit = dynamic_cast<const ExitCodeError*>(&e);
    const int code = exit ? exit->code() : kExitFailure;
    const bool quiet = code == kExitUsage && start.env->local_world_size_known && start.env->local_rank != 0;
    const std::string refusal = error_text(e);
    if (!quiet && !refusal.empty()) report_error("train", refusal);  // said now: the others may take a while
    // A refusal this worker alone meets (rank 0's run directory held by another run, a file one machine lacks) left
    // the others waiting for it at the rendezvous for dist.timeout_s, then failing without saying why.
    {
      const QuietStderr quiet_store;
      distributed::share_start_refusal(*start.env, refusal.empty() ? "it gave no reason" : refusal,
                                       std::chrono::seconds(config.dist.timeout_s));
    }
    throw ExitCodeError(code, "");
  }
}

}  // namespace lrkit::cli
