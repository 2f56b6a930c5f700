// `lrkit log check|repair LOG`: validates a run log (its series agree in
// length, steps run without gaps, /config parses back into a valid config,
// the checkpoints it lists that are still on disk have the checksums it
// recorded) and clears the mark a killed writer leaves, so that any HDF5 tool
// opens the file (as `h5clear -s` does), but never while a run writes it.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>

#include "command.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/train/checkpoint.hpp"
#include "lrkit/train/run_files.hpp"
#include "lrkit/train/train_config.hpp"
#include "run_directory.hpp"

namespace lrkit::cli {

namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: lrkit log check LOG | lrkit log repair LOG\n\n"
    "check   validate a run log: series lengths, steps, /config, listed checkpoints' checksums;\n"
    "        exit 0 when valid, 1 with one line per problem\n"
    "repair  clear the mark a killed writer leaves (h5clear -s), so any HDF5 tool opens the log;\n"
    "        refused while a run holds the run directory\n";

// The series of one event kind: its step column and the value columns beside it.
const std::map<std::string, std::vector<std::string>> kEvents = {
    {"/checkpoints/step", {"/checkpoints/crc32"}},
    {"/diagnostics/cos_matrix_step", {"/diagnostics/cos_matrix"}},
    {"/reweight/histogram_step", {"/reweight/histogram"}},
};

bool is_event_series(const std::string& path) {
  if (path.rfind("/eval/", 0) == 0 || path.rfind("/checkpoints/", 0) == 0 || path.rfind("/start", 0) == 0) return true;
  for (const auto& [step, values] : kEvents)
    if (path == step || std::find(values.begin(), values.end(), path) != values.end()) return true;
  return false;
}

std::vector<std::string> check_log(const std::string& log) {
  std::vector<std::string> problems;
  const auto datasets = h5::list_datasets(log);
  std::map<std::string, int64_t> rows;
  for (const auto& d : datasets) rows[d.path] = d.dims.empty() ? 1 : d.dims.front();
  if (!rows.count("/train/step")) return {"no /train/step: not an lrkit run log"};

  const int64_t steps = rows["/train/step"];
  for (const auto& [path, n] : rows)
    if (!is_event_series(path) && n != steps)
      problems.push_back(path + " has " + std::to_string(n) + " rows, /train/step " + std::to_string(steps));
  for (const auto& [path, n] : rows) {
    if (path.rfind("/eval/", 0) == 0 && path.size() > 5 && path.compare(path.size() - 5, 5, "/loss") == 0) {
      const std::string step = path.substr(0, path.size() - 5) + "/step";
      if (!rows.count(step) || rows[step] != n) problems.push_back(path + " and " + step + " differ in length");
    }
  }
  for (const auto& [step, values] : kEvents)
    for (const auto& value : values)
      if (rows.count(step) && rows.count(value) && rows[step] != rows[value])
        problems.push_back(value + " has " + std::to_string(rows[value]) + " rows, " + step + " " + std::to_string(rows[step]));

  const auto step_values = h5::read_series(log, "/train/step");
  for (size_t i = 0; i < step_values.size(); ++i) {
    if (!std::isfinite(step_values[i]) || (i > 0 && step_values[i] != step_values[i - 1] + 1)) {
      problems.push_back("/train/step row " + std::to_string(i) + " is " + std::to_string(step_values[i]) +
                         (i > 0 ? " after " + std::to_string(step_values[i - 1]) : std::string()) + " (a gap or repeat)");
      break;
    }
  }

  if (!h5::has_dataset(log, "/config")) {
    problems.push_back("no /config attributes (written by lrkit before 0.x?)");
  } else {
    std::vector<std::string> args;
    for (const auto& [key, value] : h5::read_string_attributes(log, "/config")) args.push_back("--" + key + "=" + value);
    train::TrainConfig config;
    std::string help;
    try {
      train::parse_train_config(args, config, help);
      config.validate();
    } catch (const std::exception& e) {
      problems.push_back(std::string("/config does not parse back into a valid config: ") + e.what());
    }
  }

  if (rows.count("/checkpoints/step") && rows.count("/checkpoints/crc32")) {
    const auto listed = h5::read_series(log, "/checkpoints/step");
    const auto crcs = h5::read_series(log, "/checkpoints/crc32");
    const std::string dir = fs::path(log).parent_path().string();
    for (size_t i = 0; i < listed.size() && i < crcs.size(); ++i) {
      const std::string file = train::checkpoint_path(dir, static_cast<int64_t>(listed[i]));
      if (!fs::exists(file)) continue;  // pruned (checkpoint.keep)
      try {
        const auto info = train::read_checkpoint_info(file);
        if (static_cast<double>(info.crc32) != crcs[i])
          problems.push_back(file + " has " + train::format_checksum(info.crc32) + ", the log recorded " +
                             train::format_checksum(static_cast<uint32_t>(crcs[i])) + " (replaced by another run?)");
      } catch (const train::CheckpointError& e) {
        problems.push_back(e.what());
      }
    }
  }
  return problems;
}

}  // namespace

int run_log_command(const std::vector<std::string>& args) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h") {
    (args.empty() ? std::cerr : std::cout) << kUsage;
    return args.empty() ? kExitUsage : kExitOk;
  }
  const std::string& action = args[0];
  if (action != "check" && action != "repair") throw UsageError("unknown action '" + action + "' (check or repair)");
  if (args.size() != 2) throw UsageError("give one run log: lrkit log " + action + " LOG");
  const std::string& log = args[1];
  if (!fs::is_regular_file(log)) throw UsageError("'" + log + "' is not a file");
  if (!h5::is_hdf5_file(log)) throw UsageError("'" + log + "' is not an HDF5 file (or is truncated)");
  try {
    if (action == "repair") {
      if (!h5::has_writer_mark(log)) {
        std::cout << log << ": no writer's mark; nothing to repair\n";
        return kExitOk;
      }
      const RunDirectoryLock lock(fs::path(log).parent_path().string());  // refuses while a run writes it
      h5::clear_writer_mark(log);
      std::cout << log << ": cleared the mark its killed writer left; any HDF5 tool opens it now\n";
      return kExitOk;
    }
    // HDF5 1.10 crashes on some damage its checksums do not cover (a garbled link table, found
    // by the fuzz run): the check runs in a child, so such a file is reported, not a crash.
    std::cout.flush();
    std::cerr.flush();
    const pid_t child = ::fork();
    if (child < 0) throw UsageError("cannot fork to check '" + log + "'");
    if (child == 0) {
      int code = kExitOk;
      try {
        std::vector<std::string> problems;
        if (h5::has_writer_mark(log))
          problems.push_back("marked open for writing by a writer that did not close it: only SWMR readers open it "
                             "(lrkit log repair " + log + " clears the mark)");
        const auto found = check_log(log);
        problems.insert(problems.end(), found.begin(), found.end());
        for (const auto& p : problems) std::cout << log << ": " << p << "\n";
        if (problems.empty()) std::cout << log << ": ok (" << h5::read_series(log, "/train/step").size() << " steps)\n";
        code = problems.empty() ? kExitOk : kExitFailure;
      } catch (const std::exception& e) {
        std::cout << log << ": " << e.what() << "\n";
        code = kExitFailure;
      }
      std::cout.flush();
      ::_exit(code);
    }
    int status = 0;
    while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (WIFSIGNALED(status)) {
      std::cout << log << ": damaged beyond what HDF5's checksums catch: reading it crashed the HDF5 library ("
                << strsignal(WTERMSIG(status)) << ")\n";
      return kExitFailure;
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailure;
  } catch (const h5::Error& e) {
    throw UsageError(e.what());
  }
}

}  // namespace lrkit::cli
