#include "torch_commands.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <system_error>

#include "command.hpp"

namespace lrkit::cli {

namespace fs = std::filesystem;

int run_in_torch_binary(char** argv) {
  const std::string command = argv[1];
  if (!LRKIT_TORCH_COMMANDS) {
    report_error(command, "this lrkit was built without LibTorch (LRKIT_WITH_TORCH=OFF, or none was found), which "
                          "train, sweep and log need; schedule, diagnose and refine work");
    return kExitUsage;
  }
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  // Beside the executable itself, not beside a link to it on the PATH.
  const fs::path torch_binary = (ec ? fs::path(argv[0]) : self).parent_path() / "lrkit-torch";
  ::execv(torch_binary.c_str(), argv);
  const int error = errno;
  report_error(command, "cannot run '" + torch_binary.string() + "', which runs lrkit's train, sweep and log beside "
                        "lrkit: " + std::strerror(error) + " (cmake --install puts both in one folder; a copy of lrkit "
                        "needs lrkit-torch beside it)");
  return kExitFailure;
}

}  // namespace lrkit::cli
