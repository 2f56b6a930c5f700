// `lrkit log check|repair LOG`: validates a run log (its series agree in
// length, steps run without gaps, /config parses back into a valid config,
// each session names its start step, the checkpoints it lists that are still on disk have the checksums it
// recorded) and repairs what a killed writer leaves: it clears the file's mark,
// so that any HDF5 tool opens it (as `h5clear -s` does), and cuts the rows of a
// flush the kill cut short, but never while a run writes it.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>

#include "command.hpp"
#include "lrkit/common/input_file.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/run_log_file.hpp"
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
    "check   validate a run log: series lengths, steps, /config, sessions' start steps, listed\n"
    "        checkpoints' checksums;\n"
    "        exit 0 when valid, 1 with one line per problem; a log a run is writing now is checked up to\n"
    "        its last whole flush\n"
    "repair  clear the mark a killed writer leaves (h5clear -s), so any HDF5 tool opens the log, and cut\n"
    "        the rows of the flush it cut short (series longer than their step column's shortest); a log\n"
    "        a full disk cut short of its allocated end is first extended to it;\n"
    "        refused while a run holds the run directory\n"
    "LOG is a run log or a run directory (its log.h5).\n";

// A write that a full disk or a file size limit refused leaves the file short of the end HDF5 had allocated.
std::string short_file_problem(uint64_t missing) {
  return "ends " + std::to_string(missing) + " bytes before the end HDF5 had allocated (a write was refused: a full disk "
         "or a file size limit), so HDF5 refuses it as truncated; lrkit log repair extends it and cuts the rows of the "
         "flush the refusal cut short";
}

// The series of one event kind: its step column and the value columns beside it.
const std::map<std::string, std::vector<std::string>> kEvents = {
    {"/checkpoints/step", {"/checkpoints/crc32"}},
    {"/diagnostics/cos_matrix_step", {"/diagnostics/cos_matrix"}},
    {"/reweight/histogram_step", {"/reweight/histogram"}},
};

// The step column a series must agree with in length: its event kind's (an
// evaluation set's /eval/NAME/step) or, for a per-step series, /train/step.
std::string step_column_of(const std::string& path) {
  if (path.rfind("/eval/", 0) == 0) return path.substr(0, path.rfind('/')) + "/step";
  for (const auto& [step, values] : kEvents)
    if (path == step || std::find(values.begin(), values.end(), path) != values.end()) return step;
  return "/train/step";
}

std::map<std::string, int64_t> series_rows(const std::string& log) {
  std::map<std::string, int64_t> rows;
  for (const auto& d : h5::list_datasets(log)) rows[d.path] = d.dims.empty() ? 1 : d.dims.front();
  return rows;
}

// A writer killed mid-flush extends and writes the series one after another, so
// some hold the flush's rows and others do not: the rows that every series of
// a step column has are whole. Each longer series and how many rows to keep.
std::map<std::string, int64_t> torn_tail(const std::map<std::string, int64_t>& rows) {
  std::map<std::string, int64_t> whole;  // by step column
  for (const auto& [path, n] : rows) {
    const auto [it, first] = whole.emplace(step_column_of(path), n);
    if (!first) it->second = std::min(it->second, n);
  }
  std::map<std::string, int64_t> keep;
  for (const auto& [path, n] : rows)
    if (const int64_t w = whole.at(step_column_of(path)); n > w) keep[path] = w;
  return keep;
}

// The rows of /train/step that every per-step series holds: all of them in a closed log; in a log a run is
// writing, those before the flush in progress (its series grow one after another).
int64_t whole_steps(const std::map<std::string, int64_t>& rows) {
  int64_t whole = rows.at("/train/step");
  for (const auto& [path, n] : rows)
    if (step_column_of(path) == "/train/step") whole = std::min(whole, n);
  return whole;
}

// `live`: a run is writing the log now, so its series may differ in length by the flush in progress.
std::vector<std::string> check_log(const std::string& log, bool live) {
  std::vector<std::string> problems;
  auto rows = series_rows(log);
  if (!rows.count("/train/step")) return {"no /train/step: not an lrkit run log"};
  for (const auto& [path, n] : rows) {
    const auto column = step_column_of(path);
    if (!rows.count(column))
      problems.push_back(path + " has no " + column);
    else if (n != rows[column] && !live)
      problems.push_back(path + " has " + std::to_string(n) + " rows, " + column + " " + std::to_string(rows[column]));
  }

  auto step_values = h5::read_series(log, "/train/step");
  if (live) step_values.resize(std::min(step_values.size(), static_cast<size_t>(whole_steps(rows))));
  for (size_t i = 0; i < step_values.size(); ++i) {
    if (!std::isfinite(step_values[i]) || (i > 0 && step_values[i] != step_values[i - 1] + 1)) {
      problems.push_back("/train/step row " + std::to_string(i) + " is " + format_number(step_values[i]) +
                         (i > 0 ? " after " + format_number(step_values[i - 1]) : std::string()) + " (a gap or repeat)");
      break;
    }
  }

  if (!h5::has_dataset(log, "/config")) {
    // lrkit.torch.DispersionHook writes the series of a run log from a Python loop, which has no lrkit config.
    const auto root = h5::read_string_attributes(log, "/");
    const bool from_hook = root.count("source") && root.at("source") == "lrkit.torch.DispersionHook";
    if (!from_hook) problems.push_back("no /config attributes (every log of lrkit train has them)");
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

  // Each session (/sessions/<i>) names the step it started at: lrkit diagnose places the resumes by it.
  const auto sessions = h5::read_numbered_attributes(log, "/sessions");
  for (size_t i = 0; i < sessions.size(); ++i) {
    const auto step = sessions[i].find("step");
    const auto whole = step == sessions[i].end() ? std::nullopt : parse_integer(step->second);
    if (!whole || *whole < 0)
      problems.push_back("/sessions/" + std::to_string(i) + " has no whole step >= 0 (its attribute 'step' " +
                         (step == sessions[i].end() ? std::string("is missing") : "is '" + step->second + "'") + ")");
  }

  if (rows.count("/checkpoints/step") && rows.count("/checkpoints/crc32")) {
    const auto listed = h5::read_series(log, "/checkpoints/step");
    const auto crcs = h5::read_series(log, "/checkpoints/crc32");
    const std::string dir = run_directory_of(log);
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

// Clears a killed writer's mark and cuts the rows of the flush it cut short.
int repair_log(const std::string& log) {
  // lrkit train's run directory lock below refuses while a run writes the log; a DispersionHook loop holds LOG.lock.
  if (const auto writer = live_log_writer(log))
    throw UsageError("'" + log + "' is being written by " + *writer + "; repair it once that has ended");
  std::optional<DirectoryLock> lock;  // refuses while a run writes it
  if (const uint64_t missing = h5::bytes_short_of_allocated_end(log); missing > 0) {
    lock.emplace(run_directory_of(log), DirectoryOwner::kTrain);
    h5::extend_to_allocated_end(log);
    std::cout << log << ": extended by the " << missing << " bytes a refused write left out, so HDF5 opens it\n";
  }
  const bool marked = h5::has_writer_mark(log);
  const auto keep = torn_tail(series_rows(log));
  if (!marked && keep.empty()) {
    if (!lock) std::cout << log << ": no writer's mark and no torn rows; nothing to repair\n";
    return kExitOk;
  }
  if (!lock) lock.emplace(run_directory_of(log), DirectoryOwner::kTrain);
  if (marked) h5::clear_writer_mark(log);
  if (!keep.empty()) h5::truncate_rows(log, keep);
  if (marked) std::cout << log << ": cleared the mark its killed writer left; any HDF5 tool opens it now\n";
  std::map<std::string, std::vector<std::string>> cut;  // by step column
  for (const auto& [path, rows] : keep) cut[step_column_of(path)].push_back(path);
  for (const auto& [column, paths] : cut) {
    std::cout << log << ": the series of " << column << " keep their first " << keep.at(paths.front())
              << " rows; the rest, a flush cut short, are gone from";
    for (const auto& path : paths) std::cout << ' ' << path;
    std::cout << "\n";
  }
  return kExitOk;
}

// A log that cannot be read at all is one more problem (exit 1), as a damaged one is.
int check_log_command(const std::string& log) {
  std::vector<std::string> problems;
  try {
    if (const uint64_t missing = h5::bytes_short_of_allocated_end(log); missing > 0)
      throw std::runtime_error(short_file_problem(missing));
    // A run writing the log now marks it open too; only a mark no live writer explains is a problem.
    const auto writer = live_log_writer(log);
    if (h5::has_writer_mark(log) && !writer)
      problems.push_back("marked open for writing by a writer that did not close it: only SWMR readers open it "
                         "(lrkit log repair " + log + " clears the mark and cuts the rows of a flush it cut short)");
    const auto found = check_log(log, writer.has_value());
    problems.insert(problems.end(), found.begin(), found.end());
    if (problems.empty())
      std::cout << log << ": ok (" << whole_steps(series_rows(log)) << " steps"
                << (writer ? " so far: " + *writer + " is writing it" : std::string())
                << ")\n";
  } catch (const std::exception& e) {
    problems.push_back(e.what());
  }
  for (const auto& p : problems) std::cout << log << ": " << p << "\n";
  return problems.empty() ? kExitOk : kExitFailure;
}

// HDF5 1.10 crashes on some damage its checksums do not cover (a garbled link
// table, found by the fuzz run): the action reads the log in a child, so such
// a file is reported, not a crash. The child reports its own errors as main does.
int in_child(const std::string& log, int (*action)(const std::string&)) {
  std::cout.flush();
  std::cerr.flush();
  const pid_t child = ::fork();
  if (child < 0) throw UsageError("cannot fork to read '" + log + "'");
  if (child == 0) {
    int code = kExitOk;
    try {
      code = action(log);
    } catch (const std::exception& e) {
      std::cerr << "lrkit log: " << e.what() << "\n";
      code = kExitUsage;
    }
    std::cout.flush();
    std::cerr.flush();
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
  const std::string log = run_log_argument(args[1]);
  if (const auto problem = input_file_problem(log))
    throw UsageError(*problem + (fs::is_directory(log) ? " (no log.h5 in it: not a run directory)" : ""));
  if (!h5::is_hdf5_file(log)) throw UsageError("'" + log + "' is not an HDF5 file (or is truncated)");
  return in_child(log, action == "check" ? check_log_command : repair_log);
}

}  // namespace lrkit::cli
