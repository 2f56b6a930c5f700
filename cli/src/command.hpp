// The sub-command interface of the `lrkit` executable. Each command parses its
// own options (Boost.Program_options) and returns the process exit code:
// 0 success, 2 bad input (one clear line on stderr), 1 failure at run time,
// 3 a training run that diverged (non-finite loss), 128 + N a training run
// that signal N stopped (after its step in progress, checkpointed).
#pragma once

#include <boost/program_options.hpp>

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lrkit/options/option_typo.hpp"

namespace lrkit::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;
inline constexpr int kExitDiverged = 3;

// A failure whose exit code tells the caller what happened; main() prints
// "lrkit <command>: <message>" and exits `code()`.
class ExitCodeError : public std::runtime_error {
 public:
  ExitCodeError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

// "lrkit <command>: <message>" on stderr, in one write: the workers of a run share the launcher's stderr, and a line
// written in pieces by two of them at once came out interleaved ("lrkit lrkit traintrain: : non-finite ...").
inline void report_error(const std::string& command, const std::string& message) {
  const std::string line = "lrkit " + command + ": " + message + "\n";
  std::cerr.write(line.data(), static_cast<std::streamsize>(line.size())).flush();
}

// Bad input: exit 2.
class UsageError : public ExitCodeError {
 public:
  explicit UsageError(const std::string& message) : ExitCodeError(kExitUsage, message) {}
};

// A Boost error of `lrkit COMMAND`'s options as a UsageError that points at the command's --help; an unknown
// option also names the option the typo most likely meant ("--windw ...; did you mean --window?"), as
// `lrkit train` does for its keys.
inline UsageError option_error(const boost::program_options::error& e,
                               const boost::program_options::options_description& known, const std::string& command) {
  std::string message = e.what();
  if (const auto* unknown = dynamic_cast<const boost::program_options::unknown_option*>(&e))
    message += options::did_you_mean_option(*unknown, known);
  return UsageError(message + " (see lrkit " + command + " --help)");
}

// Parses `args` of `lrkit COMMAND` against `visible` plus one positional
// argument stored into `positional_value`; a Boost error becomes option_error's UsageError.
inline boost::program_options::variables_map parse_with_positional(const std::vector<std::string>& args,
                                                                   const boost::program_options::options_description& visible,
                                                                   std::string& positional_value, const std::string& command) {
  namespace po = boost::program_options;
  po::options_description all;
  all.add(visible).add_options()("positional", po::value(&positional_value));
  po::positional_options_description positional;
  positional.add("positional", 1);
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(args).options(all).positional(positional).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw option_error(e, visible, command);
  }
  return vm;
}

// `lrkit`'s own commands (main.cpp)...
int run_schedule_command(const std::vector<std::string>& args);
int run_diagnose_command(const std::vector<std::string>& args);
int run_refine_command(const std::vector<std::string>& args);
// ... and lrkit-torch's (torch_main.cpp).
int run_train_command(const std::vector<std::string>& args);
int run_sweep_command(const std::vector<std::string>& args);
int run_log_command(const std::vector<std::string>& args);

struct Command {
  const char* name;
  int (*run)(const std::vector<std::string>&);
};

// Runs `command` on `args` and returns the process's exit code: the command's own, or that of the ExitCodeError it
// throws (bad input 2, a diverged run 3, a stop signal 128 + N) after its message, or 1 after `describe(e)` of any
// other exception.
inline int run_reporting_errors(const Command& command, const std::vector<std::string>& args,
                                std::string (*describe)(const std::exception&)) {
  try {
    return command.run(args);
  } catch (const ExitCodeError& e) {
    if (*e.what() != '\0') report_error(command.name, e.what());  // empty: another rank reported it
    return e.code();
  } catch (const std::exception& e) {
    report_error(command.name, describe(e));
    return kExitFailure;
  }
}

}  // namespace lrkit::cli
