// lrkit: learning-rate schedules and training dynamics. Dispatches to one
// sub-command per workflow and maps errors to exit codes (see command.hpp);
// train, sweep and log run in lrkit-torch (torch_commands.hpp).
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "command.hpp"
#include "lrkit/common/closest_name.hpp"
#include "lrkit/h5/handle.hpp"
#include "torch_commands.hpp"

namespace {

constexpr const char* kUsage =
    "usage: lrkit <command> [options]\n"
    "\n"
    "commands:\n"
    "  schedule SPEC   print, summarize, plot or export a learning-rate schedule\n"
    "  train           train the reference GPT on a byte corpus\n"
    "  diagnose RUN    worker dispersion report for a run (its directory or log) or a per-rank CSV/JSON-lines log\n"
    "  refine RUN      a refined schedule from a finished run's gradient norms (its directory or log)\n"
    "  sweep           train schedules x budgets x peaks x seeds and compare them\n"
    "  log check|repair RUN  validate a run log / repair what a killed writer left (a directory or its log)\n"
    "\n"
    "Run 'lrkit <command> --help' for a command's options.\n";

// No function: lrkit-torch runs the command (torch_commands.hpp).
const lrkit::cli::Command kCommands[] = {
    {"schedule", lrkit::cli::run_schedule_command},
    {"train", nullptr},
    {"diagnose", lrkit::cli::run_diagnose_command},
    {"refine", lrkit::cli::run_refine_command},
    {"sweep", nullptr},
    {"log", nullptr},
};

std::string what_it_says(const std::exception& e) { return e.what(); }

}  // namespace

int main(int argc, char** argv) {
  lrkit::h5::leave_open_files_at_exit();
  const std::vector<std::string> all(argv + 1, argv + argc);
  if (all.empty()) {
    std::cerr << kUsage;
    return lrkit::cli::kExitUsage;
  }
  const std::string& name = all.front();
  if (name == "--help" || name == "-h" || name == "help") {
    std::cout << kUsage;
    return lrkit::cli::kExitOk;
  }
  if (name == "--version") {
    std::cout << "lrkit " << LRKIT_VERSION << "\n";
    return lrkit::cli::kExitOk;
  }
  for (const lrkit::cli::Command& command : kCommands) {
    if (name != command.name) continue;
    if (!command.run) return lrkit::cli::run_in_torch_binary(argv);
    return lrkit::cli::run_reporting_errors(command, {all.begin() + 1, all.end()}, what_it_says);
  }
  std::vector<std::string> names;
  for (const lrkit::cli::Command& command : kCommands) names.emplace_back(command.name);
  const auto meant = lrkit::closest_name(name, names);
  std::cerr << "lrkit: unknown command '" << name << "'" << (meant ? "; did you mean '" + *meant + "'?" : "") << "\n" << kUsage;
  return lrkit::cli::kExitUsage;
}
