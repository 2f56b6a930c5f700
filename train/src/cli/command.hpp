// The sub-command interface of the `lrkit` executable. Each command parses its
// own options (Boost.Program_options) and returns the process exit code:
// 0 success, 2 bad input (one clear line on stderr), 1 failure at run time.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

namespace lrkit::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// Thrown for bad input; main() prints "lrkit <command>: <message>" and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

int run_schedule_command(const std::vector<std::string>& args);
int run_train_command(const std::vector<std::string>& args);
int run_diagnose_command(const std::vector<std::string>& args);
int run_refine_command(const std::vector<std::string>& args);

}  // namespace lrkit::cli
