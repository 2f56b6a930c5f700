// Per-rank signals from Weights & Biases runs: one run per rank (W&B's "track each process separately": every rank
// calls wandb.init, grouped or not), or one run that logs every rank's values (a rank field, or a field per rank).
// Each history row is read as the JSON object its items make (ObjectRows), at the step W&B plots it against.
#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/common/wandb_history.hpp"
#include "lrkit/common/wandb_runs.hpp"
#include "rank_log_parts.hpp"
#include "rank_names.hpp"
#include "text_rows.hpp"

namespace lrkit::diagnostics {

namespace {

// A history row as the JSON object its items make: an item's name is its key (nested keys joined by '.'), and an
// object logged as one item (wandb.log({"rank0": {"loss": x}})) gives its members as W&B names them, rank0.loss.
class RowObject {
 public:
  // `where()` names the row in an error.
  template <class Where>
  void build(const WandbHistory& row, const Where& where) {
    object_.clear();
    for (size_t i = 0; i < row.size(); ++i) {
      JsonMember& member = object_.add();
      try {
        parse_json_value(row[i].value_json, member);
      } catch (const JsonError& e) {
        throw RankLogError(where() + ": item '" + text_for_message(row[i].name) + "': '" +
                           text_for_message(std::string(row[i].value_json)) + "' is not JSON (" + e.what() + ")");
      }
      member.name = row[i].name;
      if (member.kind == JsonMember::Kind::nested && member.text.front() == '{') add_members(row[i].name, 0);
    }
  }
  const JsonObject& object() const { return object_; }
  // Sets the member `name` to the number `text` (a step), replacing one the row holds.
  void set_number(const std::string& name, std::string text) {  // a copy: `text` may be a member's, which add() moves
    JsonMember* member = nullptr;
    for (size_t i = 0; i < object_.size() && !member; ++i)
      if (object_[i].name == name) member = &object_[i];
    if (!member) {
      member = &object_.add();
      member->name = name;
    }
    member->kind = JsonMember::Kind::number;
    member->text = std::move(text);
  }

 private:
  // The members of the object the last member added holds, named `prefix`.member, nested ones in turn. (A member's
  // reference lasts until the next add().)
  void add_members(const std::string& prefix, int depth) {
    if (depth >= 16) return;
    JsonObject inner;
    try {
      inner.parse(object_[object_.size() - 1].text);
    } catch (const JsonError&) {
      return;  // parse_json_value read it whole: it is an object
    }
    for (size_t i = 0; i < inner.size(); ++i) {
      const std::string name = prefix + "." + inner[i].name;
      JsonMember& member = object_.add();
      member = inner[i];
      member.name = name;
      if (inner[i].kind == JsonMember::Kind::nested && inner[i].text.front() == '{') add_members(name, depth + 1);
    }
  }

  JsonObject object_;
};

// What a run gives of its rank: its config's rank field (names[kRank]), and its name.
struct RunFacts {
  std::string first_path, id, name, group;
  std::optional<std::string> config_rank;  // JSON text
};

// Reads one run's sessions into `out`, as rank `fixed_rank` (-1: the rows name their ranks); a later session's rows
// replace those of the earlier ones from its first step on (a resume from a checkpoint logs those steps again).
RunFacts read_run(const WandbRun& run, const Names& names, int64_t fixed_rank, std::vector<File>& files,
                  TextRows& out) {
  const std::vector<std::string>& sessions = run.sessions;
  RunFacts facts;
  facts.first_path = sessions.front();
  facts.id = run.id;
  const size_t run_start = out.rows.size();
  RowObject row;
  for (size_t k = 0; k < sessions.size(); ++k) {
    const std::string& path = sessions[k];
    const size_t file = files.size();
    files.push_back({path + " (W&B run log)", "history row at byte"});
    const size_t session_start = out.rows.size();
    try {
      WandbHistory history(path);
      ObjectRows rows(names, fixed_rank, file, out);
      while (history.next_row()) {
        const auto where = [&] {
          return files[file].name + " " + files[file].position + " " + std::to_string(history.row_offset());
        };
        row.build(history, where);
        const JsonMember* loss = rows.loss_named(row.object());
        if (!loss) continue;  // another metric's row (an evaluation's, say)
        if (!names.mapped(kStep)) {
          // The step W&B plots the loss against: its define_metric step metric, else the row's step field, else
          // _step (which counts wandb.log's commits), else the record's.
          const std::string& step_metric = history.step_metrics().of(loss->name);
          const JsonMember* step = step_metric.empty() ? nullptr : row.object().find(step_metric);
          if (!step_metric.empty() && !step)
            throw RankLogError(where() + ": it holds " + loss->name + " but not " + step_metric +
                               ", the step metric wandb.define_metric gave it");
          if (!step && !row.object().find(names[kStep])) step = row.object().find("_step");
          if (step && step->name != names[kStep]) row.set_number(names[kStep], step->text);
          if (!step && !row.object().find(names[kStep]) && history.step_num())
            row.set_number(names[kStep], format_number(*history.step_num()));
        }
        if (fixed_rank < 0 && loss->name == names[kLoss] && !row.object().find(names[kRank]))
          if (const std::string* config_rank = history.config(names[kRank]))
            throw RankLogError(where() + ": no field '" + names[kRank] + "': the run of rank " +
                               text_for_message(*config_rank) + " (its config's '" + names[kRank] + "') alone; give "
                               "every rank's run (the directory above them, or their directories)");
        rows.read(row.object(), history.row_offset(), where);
      }
      rows.finish(files[file].name);
      if (facts.name.empty()) facts.name = history.display_name();
      if (facts.group.empty()) facts.group = history.group();
      if (const std::string* rank = history.config(names[kRank])) facts.config_rank = *rank;
    } catch (const WandbLogError& e) {
      throw RankLogError(e.what());
    }
    if (k == 0 || out.rows.size() == session_start) continue;
    double resumed_at = out.rows[session_start].step;
    for (size_t i = session_start; i < out.rows.size(); ++i) resumed_at = std::min(resumed_at, out.rows[i].step);
    const auto rewritten = std::remove_if(out.rows.begin() + static_cast<long>(run_start),
                                          out.rows.begin() + static_cast<long>(session_start),
                                          [&](const Row& r) { return r.step >= resumed_at; });
    out.rows.erase(rewritten, out.rows.begin() + static_cast<long>(session_start));
    out.records_sessions = true;
    out.resumed.push_back({resumed_at, std::nullopt});
  }
  return facts;
}

// "NAME (ID)", or the ID alone.
std::string run_name(const RunFacts& run) { return run.name.empty() ? run.id : run.name + " (" + run.id + ")"; }

// Each run's rank: its config's rank field; else the number its name holds, where the runs' names differ in that
// number alone (rank-0, rank-1, ...); else the order the runs started in, said in a warning.
std::vector<int64_t> ranks_of(const std::vector<RunFacts>& runs, const Names& names,
                              std::vector<std::string>& warnings) {
  const size_t count = runs.size();
  std::vector<int64_t> ranks(count, -1);
  const auto with_config = std::count_if(runs.begin(), runs.end(), [](const RunFacts& r) { return r.config_rank; });
  if (with_config > 0) {
    for (size_t r = 0; r < count; ++r) {
      const RunFacts& run = runs[r];
      const std::string where = "W&B run " + run_name(run) + " (" + run.first_path + ")";
      if (!run.config_rank)
        throw RankLogError(where + ": its config has no '" + names[kRank] + "', which the other runs' give their rank");
      JsonMember value;
      double rank = -1;
      try {
        parse_json_value(*run.config_rank, value);
      } catch (const JsonError&) {
      }
      if (value.kind == JsonMember::Kind::number)
        chars_to_double(value.text.data(), value.text.data() + value.text.size(), rank);
      if (!(rank >= 0 && rank <= 65535 && rank == static_cast<double>(static_cast<int64_t>(rank))))
        throw RankLogError(where + ": its config's '" + names[kRank] + "' is " + text_for_message(*run.config_rank) +
                           ", not a rank (a whole number in [0, 65535])");
      ranks[r] = static_cast<int64_t>(rank);
    }
  } else {
    std::vector<std::string> run_names;
    for (const RunFacts& run : runs) run_names.push_back(run.name);
    if (const auto by_name = ranks_from_names(run_names, "the W&B runs' names", warnings)) {
      ranks = *by_name;
    } else {
      std::string mapping;
      for (size_t r = 0; r < count; ++r) {
        ranks[r] = static_cast<int64_t>(r);
        if (r < 8) mapping += (r ? ", rank " : "rank ") + std::to_string(r) + " = " + run_name(runs[r]);
      }
      warnings.push_back("the W&B runs name no rank (no '" + names[kRank] + "' in their config, and their names do not "
                         "differ in a number alone): ranked in the order they started, " + mapping +
                         (count > 8 ? ", ..." : "") + "; wandb.init(config={'" + names[kRank] + "': rank}) names it");
    }
  }
  std::vector<size_t> run_of(count, count);
  for (size_t r = 0; r < count; ++r) {
    const auto k = static_cast<size_t>(ranks[r]);
    if (k >= count) {
      std::vector<int64_t> given(ranks);
      std::sort(given.begin(), given.end());
      std::string listed;
      for (size_t i = 0; i < given.size(); ++i) listed += (i ? ", " : "") + std::to_string(given[i]);
      int64_t missing = 0;
      while (std::binary_search(given.begin(), given.end(), missing)) ++missing;
      throw RankLogError("the " + std::to_string(count) + " W&B runs' config '" + names[kRank] + "' gives ranks " +
                         listed + ": no run of rank " + std::to_string(missing) + " (give every rank's run)");
    }
    if (run_of[k] < count)
      throw RankLogError("W&B runs " + run_name(runs[run_of[k]]) + " (" + runs[run_of[k]].first_path + ") and " +
                         run_name(runs[r]) + " (" + runs[r].first_path + ") are both of rank " + std::to_string(k));
    run_of[k] = r;
  }
  return ranks;
}

}  // namespace

RankLog read_wandb_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  const Names names(options);
  const auto runs = wandb_runs_of(paths);
  TextRows out;
  std::vector<File> files;
  std::vector<RunFacts> facts;
  for (size_t r = 0; r < runs.size(); ++r)
    facts.push_back(read_run(runs[r], names, runs.size() > 1 ? static_cast<int64_t>(r) : -1, files, out));
  std::set<std::string> groups;
  for (const RunFacts& run : facts) groups.insert(run.group);
  if (groups.size() > 1) {
    std::string listed;
    for (const std::string& group : groups) {
      listed += listed.empty() ? "" : "; ";
      listed += (group.empty() ? "no group" : "group '" + group + "'") + ":";
      for (const RunFacts& run : facts)
        if (run.group == group) listed += " " + run_name(run);
    }
    throw RankLogError("the " + std::to_string(facts.size()) + " W&B runs are of " + std::to_string(groups.size()) +
                       " groups (" + listed + "): give one group's runs (their directories)");
  }
  if (facts.size() > 1) {
    const std::vector<int64_t> ranks = ranks_of(facts, names, out.warnings);
    for (Row& row : out.rows) row.rank = ranks[static_cast<size_t>(row.rank)];
  }
  // The resumes of every rank's run, once each: a run's sessions resume where the others' do.
  std::sort(out.resumed.begin(), out.resumed.end(), [](const Resume& a, const Resume& b) { return a.step < b.step; });
  out.resumed.erase(std::unique(out.resumed.begin(), out.resumed.end(),
                                [](const Resume& a, const Resume& b) { return a.step == b.step; }),
                    out.resumed.end());
  std::string source = files.front().name;
  if (facts.size() > 1) source += " and " + std::to_string(facts.size() - 1) + " more run(s), one per rank";
  else if (files.size() > 1) source += " and " + std::to_string(files.size() - 1) + " later session(s)";
  return assemble(source, files, out, names);
}

}  // namespace lrkit::diagnostics
