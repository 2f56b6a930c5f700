// Where Weights & Biases keeps its run logs: each session of a run writes wandb/[offline-]run-DATE_TIME-ID/
// run-ID.wandb (wandb.init puts wandb/ in the working directory); a run resumed with wandb.init(id=..., resume=...)
// writes each session into a directory of its own, of the same ID, and latest-run links to the newest.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace lrkit {

// The run log directly in `directory` (a run's directory), empty where there is none. Throws WandbLogError where
// it holds several.
std::string wandb_log_in(const std::string& directory);

// The run directories directly in `directory` and in its wandb/, sorted; latest-run among them.
std::vector<std::string> wandb_runs_below(const std::string& directory);

// One run's sessions: their logs, oldest first.
struct WandbRun {
  std::string id;
  std::vector<std::string> sessions;
};

// Logs gathered into runs by their run's ID (their directory's, [offline-]run-DATE_TIME-ID; else their name's,
// run-ID.wandb), each run's sessions ordered by their directory's DATE_TIME (whatever the prefix), the runs by their
// first session's. A log given twice is read once; one in a directory not so named (latest-run, wandb's link to the
// newest session) is left out where its run has sessions that are.
std::vector<WandbRun> wandb_runs_of(const std::vector<std::string>& logs);

// The runs below `directory` (wandb_runs_below's, latest-run aside), as wandb_runs_of gathers them. nullopt where a
// run directory is not named [offline-]run-DATE_TIME-ID or holds several logs (the caller's refusal names them).
std::optional<std::vector<WandbRun>> wandb_runs_by_id(const std::string& directory);

// The sessions of the one run below `directory`; empty where there are none, or runs of several IDs.
std::vector<std::string> wandb_sessions_below(const std::string& directory);

}  // namespace lrkit
