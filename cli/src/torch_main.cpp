// lrkit-torch: the `lrkit` commands that need LibTorch (train, sweep, log). `lrkit` becomes this executable for them
// (torch_commands.hpp); a run's workers and a sweep's runs start it again through /proc/self/exe (child_process.hpp).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "libtorch_error.hpp"
#include "lrkit/h5/handle.hpp"

namespace {

const lrkit::cli::Command kCommands[] = {
    {"train", lrkit::cli::run_train_command},
    {"sweep", lrkit::cli::run_sweep_command},
    {"log", lrkit::cli::run_log_command},
};

}  // namespace

int main(int argc, char** argv) {
  lrkit::h5::leave_open_files_at_exit();
  const std::vector<std::string> all(argv + 1, argv + argc);
  for (const lrkit::cli::Command& command : kCommands)
    if (!all.empty() && all.front() == command.name)  // a c10::Error's what() carries a backtrace: error_text cuts it
      return lrkit::cli::run_reporting_errors(command, {all.begin() + 1, all.end()}, lrkit::cli::error_text);
  std::cerr << "lrkit-torch runs lrkit's train, sweep and log commands for `lrkit`: run 'lrkit "
            << (all.empty() ? "--help" : all.front()) << "'\n";
  return lrkit::cli::kExitUsage;
}
