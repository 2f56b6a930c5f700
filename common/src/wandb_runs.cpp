#include "lrkit/common/wandb_runs.hpp"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "lrkit/common/file_status.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/wandb_log_reader.hpp"

namespace lrkit {

namespace {

std::string joined(const std::string& directory, const std::string& name) {
  return (std::filesystem::path(directory) / name).string();  // composes a name; the disk is asked in file_status
}

// The run directories below `directory` (wandb_runs_below's), each with its log: empty where it holds several.
std::vector<std::pair<std::string, std::string>> runs_and_logs(const std::string& directory) {
  std::vector<std::pair<std::string, std::string>> runs;
  for (const std::string& parent : {directory, joined(directory, "wandb")}) {
    if (!is_directory_path(parent)) continue;
    for (const std::string& name : directory_names(parent)) {
      const std::string path = joined(parent, name);
      if (!is_directory_path(path)) continue;
      try {
        if (std::string log = wandb_log_in(path); !log.empty()) runs.emplace_back(path, std::move(log));
      } catch (const WandbLogError&) {
        runs.emplace_back(path, "");  // one with several logs is named all the same
      }
    }
  }
  return runs;
}

// The DATE_TIME and ID of a run directory's name, [offline-]run-DATE_TIME-ID; false for another name.
bool run_directory_name(const std::string& name, std::string& time, std::string& id) {
  const size_t start = name.rfind("run-", 0) == 0 ? 4 : name.rfind("offline-run-", 0) == 0 ? 12 : std::string::npos;
  const size_t dash = name.rfind('-');
  if (start == std::string::npos || dash == std::string::npos || dash < start) return false;
  time = name.substr(start, dash - start);
  id = name.substr(dash + 1);
  return true;
}

}  // namespace

std::string wandb_log_in(const std::string& directory) {
  std::vector<std::string> logs;
  for (const std::string& name : directory_names(directory)) {
    const std::string path = joined(directory, name);
    if (name.size() > 6 && name.compare(name.size() - 6, 6, ".wandb") == 0 && path_kind(path) == PathKind::kFile &&
        is_wandb_file(path))
      logs.push_back(path);
  }
  if (logs.size() > 1)
    throw WandbLogError("'" + directory + "' holds " + std::to_string(logs.size()) +
                        " Weights & Biases run logs: " + list_for_message(logs, 10) + ": name one");
  return logs.empty() ? std::string() : logs.front();
}

std::vector<std::string> wandb_runs_below(const std::string& directory) {
  std::vector<std::string> runs;
  for (const auto& run : runs_and_logs(directory)) runs.push_back(run.first);
  return runs;
}

std::vector<WandbRun> wandb_runs_of(const std::vector<std::string>& logs) {
  struct Session {
    std::string log, time;  // time: empty where the directory is not a run directory's name
  };
  std::vector<std::pair<std::string, std::vector<Session>>> runs;  // (ID, sessions), in the order first met
  for (const std::string& log : logs) {
    const std::filesystem::path path(log);
    const std::string file = path.filename().string();
    Session session{log, ""};
    std::string id;
    if (!run_directory_name(path.parent_path().filename().string(), session.time, id)) {
      session.time.clear();
      const bool named =
          file.rfind("run-", 0) == 0 && file.size() > 10 && file.compare(file.size() - 6, 6, ".wandb") == 0;
      id = named ? file.substr(4, file.size() - 10) : log;
    }
    const auto run = std::find_if(runs.begin(), runs.end(), [&](const auto& r) { return r.first == id; });
    if (run == runs.end()) runs.emplace_back(id, std::vector<Session>{session});
    else if (std::none_of(run->second.begin(), run->second.end(), [&](const Session& s) { return s.log == log; }))
      run->second.push_back(session);
  }
  for (auto& [id, sessions] : runs) {
    const auto unnamed = [](const Session& s) { return s.time.empty(); };
    if (!std::all_of(sessions.begin(), sessions.end(), unnamed))
      sessions.erase(std::remove_if(sessions.begin(), sessions.end(), unnamed), sessions.end());
    std::stable_sort(sessions.begin(), sessions.end(),
                     [](const Session& a, const Session& b) { return a.time < b.time; });
  }
  std::stable_sort(runs.begin(), runs.end(),
                   [](const auto& a, const auto& b) { return a.second.front().time < b.second.front().time; });
  std::vector<WandbRun> gathered;
  for (const auto& [id, sessions] : runs) {
    gathered.push_back({id, {}});
    for (const Session& session : sessions) gathered.back().sessions.push_back(session.log);
  }
  return gathered;
}

std::optional<std::vector<WandbRun>> wandb_runs_by_id(const std::string& directory) {
  std::vector<std::string> logs;
  for (const auto& [run, log] : runs_and_logs(directory)) {
    const std::string name = std::filesystem::path(run).filename().string();
    std::string time, id;
    if (name == "latest-run") continue;
    if (!run_directory_name(name, time, id) || log.empty()) return std::nullopt;
    logs.push_back(log);
  }
  return wandb_runs_of(logs);
}

std::vector<std::string> wandb_sessions_below(const std::string& directory) {
  const auto runs = wandb_runs_by_id(directory);
  return runs && runs->size() == 1 ? runs->front().sessions : std::vector<std::string>();
}

}  // namespace lrkit
