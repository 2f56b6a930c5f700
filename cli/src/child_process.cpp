#include "child_process.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>

namespace lrkit::cli {

pid_t start_lrkit_train(const std::vector<std::string>& args, const std::function<void()>& in_child, const std::string& what) {
  std::vector<std::string> command = {"lrkit", "train"};
  command.insert(command.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : command) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string exec_failed = "lrkit train: cannot start " + what + "\n";
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed while starting " + what);
  if (pid == 0) {
    if (!stop_when_the_parent_dies(parent)) ::_exit(128 + SIGTERM);
    in_child();
    ::execv("/proc/self/exe", argv.data());
    [[maybe_unused]] const auto written = ::write(STDERR_FILENO, exec_failed.data(), exec_failed.size());
    ::_exit(127);
  }
  return pid;
}

bool stop_when_the_parent_dies(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  return ::getppid() == parent;
}

int exit_code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

std::string how_it_failed(int status) {
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    return "was killed by SIGKILL (the kernel's out-of-memory killer sends it when the machine runs out of memory; "
           "dmesg says whether it did)";
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + strsignal(WTERMSIG(status)) + ")";
  return "failed (exit " + std::to_string(exit_code(status)) + ")";
}

}  // namespace lrkit::cli
