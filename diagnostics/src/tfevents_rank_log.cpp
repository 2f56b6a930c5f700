// Per-rank signals from TensorBoard event files. A run is a directory's event files, as TensorBoard reads them: its
// writer's sessions, in the order of their names (events.out.tfevents.TIME...). The layouts:
// - a run per rank: each rank's SummaryWriter in a directory of its own (runs/rank_0, runs/rank_1, ...), ranked by the
//   number their names differ in;
// - several ranks' writers in one directory (every rank calling SummaryWriter() within the same second gets the same
//   runs/DATE_HOST): their files were written at the same time, and each file is a rank's;
// - one run that logs every rank's values: a tag per rank (loss_0, loss_1, ...; another pattern mapped, as
//   --columns 'loss=loss/rank_{rank}'), or add_scalars("loss", {"0": l0, "1": l1}), which puts each value in a run
//   below the writer's directory (loss_0, loss_1, holding the tag loss): read as the tags loss_0, loss_1 of the run
//   above them, as TensorBoard's chart of them shows them.
// Each step of a rank's run is read as a JSON object of its scalars (ObjectRows), as a W&B history row is: the layouts,
// mappings and checks are the other readers'.
#include <algorithm>
#include <charconv>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

#include "lrkit/common/message_text.hpp"
#include "lrkit/common/tfevents.hpp"
#include "rank_log_parts.hpp"
#include "rank_names.hpp"
#include "scalar_rows.hpp"
#include "text_fields.hpp"
#include "text_rows.hpp"

namespace lrkit::diagnostics {

namespace {

namespace fs = std::filesystem;

// One event file's scalars by step, and when it was written.
struct Session {
  std::string path;
  ScalarRows steps;
  std::optional<int64_t> purged_from;  // the step of its SessionLog START (SummaryWriter(purge_step=s))
  std::vector<int64_t> restarts;       // steps where its tags went back to an earlier step (a loop run again)
  double first_wall = std::numeric_limits<double>::infinity(), last_wall = -first_wall;

  bool overlaps(const Session& other) const {
    return first_wall < other.last_wall && other.first_wall < last_wall;
  }
};

// The scalars a writer logged, by step, once its later sessions replaced the rows they logged again.
struct Writer {
  Writer(std::string path_, std::string name_, bool one_file = false)
      : path(std::move(path_)), name(std::move(name_)), one_file_of_several(one_file) {}
  std::string path;  // its directory, or its file where a directory holds several writers' files
  std::string name;  // the directory's or the file's name, which may number its rank
  bool one_file_of_several;
  ScalarRows steps;
  std::set<size_t> tags;        // the scalar tags its rows hold, by number: found once, when its rows are read
  std::vector<Resume> resumed;  // where its later sessions (or restarts) began

  void add(Session&& session, bool later) {
    std::optional<int64_t> from = session.purged_from;
    if (!session.steps.empty()) {
      const int64_t first = session.steps.by_step().begin()->first;
      from = std::min(from.value_or(first), first);
    }
    if (later && from) {
      steps.drop_from(*from);
      resumed.push_back({static_cast<double>(*from), std::nullopt});
    }
    for (const int64_t step : session.restarts) resumed.push_back({static_cast<double>(step), std::nullopt});
    steps.take(std::move(session.steps));
  }
};

// The scalar tags rows hold, each once.
std::set<size_t> tags_in(const ScalarRows& rows) {
  std::set<size_t> tags;
  for (const auto& [step, row] : rows.by_step())
    for (size_t k = 0; k < row.size(); ++k) tags.insert(row[k].tag);
  return tags;
}

class Reader {
 public:
  explicit Reader(const ReadOptions& options) : names_(options), wide_(names_) {}
  RankLog read(const std::vector<std::string>& paths);

 private:
  bool names_a_field(std::string_view tag) const;
  Session read_session(const std::string& path);
  std::vector<Writer> writers_of(const std::string& directory, std::vector<std::string> files);
  void fold_add_scalars_runs(std::vector<Writer>& writers);
  std::vector<int64_t> ranks_of(const std::vector<const Writer*>& writers);
  void read_rows(const Writer& writer, int64_t fixed_rank, TextRows& out);
  std::string tags_of(const Writer& writer) const;
  bool has_loss(const Writer& writer) const;
  bool names_ranks(const Writer& writer) const;

  Names names_;
  WideNames wide_;
  Tags tags_;
  std::vector<File> files_;
  std::vector<std::string> warnings_;
};

// A tag that a field reads (loss, or loss_3 with a tag per rank): one that is no scalar is an error, where another
// tag's histogram or text is not read at all.
bool Reader::names_a_field(std::string_view tag) const {
  for (const Field f : {kRank, kLoss, kGradNorm, kCosToMean})
    if (tag == names_[f] || (f != kRank && wide_.rank_of(f, tag) >= 0)) return true;
  return names_.mapped(kStep) && tag == names_[kStep];
}

Session Reader::read_session(const std::string& path) {
  Session session;
  session.path = path;
  const size_t file = files_.size();
  files_.push_back({path + " (TensorBoard event file)", "event at byte"});
  constexpr int64_t kNone = std::numeric_limits<int64_t>::min();
  std::vector<int64_t> last;  // each tag's last step, by its number
  TfEventReader events(path);
  TfEvent event;
  while (events.next(event)) {
    if (event.wall_time != 0.0) {
      session.first_wall = std::min(session.first_wall, event.wall_time);
      session.last_wall = std::max(session.last_wall, event.wall_time);
    }
    const auto start_over = [&](int64_t step) {
      session.steps.drop_from(step);
      for (int64_t& tag_step : last)
        if (tag_step >= step) tag_step = kNone;
    };
    if (event.session_start) {
      start_over(event.step);
      if (!session.purged_from) session.purged_from = event.step;
    }
    for (const SummaryValue& v : event.values) {
      double value = 0.0;
      if (const std::string why = v.scalar(value); !why.empty()) {
        if (names_a_field(v.tag()))
          throw RankLogError(files_[file].name + " " + files_[file].position + " " +
                             std::to_string(events.event_offset()) + ": tag '" + text_for_message(v.tag()) +
                             "' at step " + std::to_string(event.step) + " is not a scalar: " + why);
        continue;
      }
      const size_t tag = tags_.id(v.tag());
      if (last.size() < tags_.size()) last.resize(tags_.size(), kNone);
      if (last[tag] != kNone && event.step < last[tag]) {
        start_over(event.step);
        session.restarts.push_back(event.step);
      }
      last[tag] = event.step;
      session.steps.row(event.step, file, events.event_offset()).set(tag, value);
    }
  }
  return session;
}

// A directory's writers: one whose files are its sessions, or one per file where the files were written at the same
// time (several ranks' writers in one directory). Files without a scalar are left out.
std::vector<Writer> Reader::writers_of(const std::string& directory, std::vector<std::string> files) {
  std::sort(files.begin(), files.end());
  std::vector<Session> sessions;
  for (const std::string& file : files) {
    Session session = read_session(file);
    if (!session.steps.empty()) sessions.push_back(std::move(session));
  }
  size_t overlapping = 0, pairs = 0;
  const Session* first_pair[2] = {};
  const Session* apart[2] = {};
  for (size_t i = 0; i < sessions.size(); ++i)
    for (size_t j = i + 1; j < sessions.size(); ++j, ++pairs) {
      const bool overlap = sessions[i].overlaps(sessions[j]);
      overlapping += overlap;
      if (overlap && !first_pair[0]) first_pair[0] = &sessions[i], first_pair[1] = &sessions[j];
      if (!overlap && !apart[0]) apart[0] = &sessions[i], apart[1] = &sessions[j];
    }
  std::vector<Writer> writers;
  const std::string name = fs::path(directory).filename().string();
  if (overlapping == 0 || sessions.size() < 2) {
    Writer writer{directory, name.empty() ? directory : name};
    for (size_t k = 0; k < sessions.size(); ++k) writer.add(std::move(sessions[k]), k > 0);
    writer.tags = tags_in(writer.steps);
    writers.push_back(std::move(writer));
    return writers;
  }
  if (overlapping < pairs)
    throw RankLogError("'" + directory + "': its event files " + first_pair[0]->path + " and " + first_pair[1]->path +
                       " were written at the same time (by two writers), and " + apart[0]->path + " and " +
                       apart[1]->path + " one after the other (a session resumed): which writer a session resumed is "
                       "not known; give each rank's writer a directory of its own "
                       "(SummaryWriter(log_dir=f'runs/rank_{rank}'))");
  for (Session& session : sessions) {
    Writer writer{session.path, fs::path(session.path).filename().string(), true};
    writer.add(std::move(session), false);
    writer.tags = tags_in(writer.steps);
    writers.push_back(std::move(writer));
  }
  return writers;
}

// add_scalars(MAIN, {KEY: value}) writes each value into the run MAIN_KEY ('/' in MAIN made '_') below the writer's
// directory, under the tag MAIN: such a run becomes the tag MAIN_KEY of the run above it (made where that directory
// holds no event file of its own).
void Reader::fold_add_scalars_runs(std::vector<Writer>& writers) {
  std::vector<Writer> kept;
  std::map<std::string, size_t> by_directory;  // the writers that are a directory's only one
  std::set<std::string> shared;                // the directories that hold several writers' files
  for (size_t i = 0; i < writers.size(); ++i) {
    if (!writers[i].one_file_of_several) by_directory[writers[i].path] = i;
    else shared.insert(fs::path(writers[i].path).parent_path().string());
  }
  std::vector<bool> folded(writers.size(), false);
  for (size_t i = 0; i < writers.size(); ++i) {
    Writer& child = writers[i];
    if (child.one_file_of_several || child.tags.size() != 1) continue;
    const size_t only_tag = *child.tags.begin();
    std::string main = tags_.name(only_tag);
    std::replace(main.begin(), main.end(), '/', '_');
    if (child.name.size() <= main.size() + 1 || child.name.compare(0, main.size() + 1, main + "_") != 0) continue;
    const std::string parent_path = fs::path(child.path).parent_path().string();
    if (shared.count(parent_path)) continue;  // several writers above: whose values these are is not known
    auto parent = by_directory.find(parent_path);
    if (parent == by_directory.end()) {
      writers.emplace_back(parent_path, fs::path(parent_path).filename().string());
      folded.push_back(false);
      parent = by_directory.emplace(parent_path, writers.size() - 1).first;
    }
    Writer& into = writers[parent->second];
    Writer& from = writers[i];  // push_back above may have moved `child`
    const size_t tag = tags_.id(tags_.name(only_tag) + from.name.substr(main.size()));
    for (const auto& [step, row] : from.steps.by_step())
      into.steps.row(step, row.file, row.offset).set(tag, row[0].value);
    into.tags.insert(tag);
    into.resumed.insert(into.resumed.end(), from.resumed.begin(), from.resumed.end());
    folded[i] = true;
  }
  for (size_t i = 0; i < writers.size(); ++i)
    if (!folded[i]) kept.push_back(std::move(writers[i]));
  writers = std::move(kept);
}

bool Reader::has_loss(const Writer& writer) const {
  return std::any_of(writer.tags.begin(), writer.tags.end(), [&](size_t tag) {
    return tags_.name(tag) == names_[kLoss] || wide_.rank_of(kLoss, tags_.name(tag)) >= 0;
  });
}

// Whether a writer's tags name ranks: a tag per rank (loss_0, ...), or a rank tag.
bool Reader::names_ranks(const Writer& writer) const {
  return std::any_of(writer.tags.begin(), writer.tags.end(), [&](size_t tag) {
    return tags_.name(tag) == names_[kRank] || wide_.rank_of(kLoss, tags_.name(tag)) >= 0;
  });
}

// A writer's scalar tags, sorted, for a message.
std::string Reader::tags_of(const Writer& writer) const {
  std::vector<std::string> tags;
  for (const size_t tag : writer.tags) tags.push_back(text_for_message(tags_.name(tag)));
  std::sort(tags.begin(), tags.end());
  return list_for_message(tags, 20);
}

// The runs' paths below the deepest directory that holds them all, which number their ranks: their own names where
// they lie side by side (rank_0, rank_1), rank_0/tensorboard where each rank's writer is in a directory of its own.
std::vector<std::string> names_below_their_ancestor(const std::vector<const Writer*>& writers) {
  fs::path ancestor = fs::path(writers.front()->path).parent_path();
  for (const Writer* w : writers) {
    const fs::path parent = fs::path(w->path).parent_path();
    fs::path common;
    for (auto a = ancestor.begin(), b = parent.begin(); a != ancestor.end() && b != parent.end() && *a == *b; ++a, ++b)
      common /= *a;
    ancestor = common;
  }
  std::vector<std::string> names;
  for (const Writer* w : writers) {
    const std::string below = fs::path(w->path).lexically_relative(ancestor).string();
    names.push_back(below.empty() ? w->name : below);  // none: one path absolute and another relative
  }
  return names;
}

// The ranks of writers that are one per rank: the files' order where one directory holds them all, else the number
// their paths differ in.
std::vector<int64_t> Reader::ranks_of(const std::vector<const Writer*>& writers) {
  std::vector<std::string> names;
  for (const Writer* w : writers) names.push_back(w->name);
  const bool all_versions = std::all_of(names.begin(), names.end(), [](const std::string& n) {
    const std::string prefix = "version_";  // Lightning's TensorBoardLogger: version_0, version_1, ...
    return n.size() > prefix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
           std::all_of(n.begin() + static_cast<std::ptrdiff_t>(prefix.size()), n.end(),
                       [](char c) { return c >= '0' && c <= '9'; });
  });
  const auto paths = [&] {
    std::vector<std::string> listed;
    for (const Writer* w : writers) listed.push_back(w->path);
    return list_for_message(listed, 8);
  };
  if (all_versions)
    throw RankLogError("the TensorBoard runs " + paths() + " are Lightning's versions (a run per fit, not per rank): "
                       "give one of them");
  const std::string directory = fs::path(writers.front()->path).parent_path().string();
  const bool one_directory = std::all_of(writers.begin(), writers.end(), [&](const Writer* w) {
    return w->one_file_of_several && fs::path(w->path).parent_path().string() == directory;
  });
  if (one_directory) {
    std::string mapping;
    for (size_t r = 0; r < writers.size() && r < 8; ++r)
      mapping += (r ? ", rank " : "rank ") + std::to_string(r) + " = " + writers[r]->name;
    warnings_.push_back("'" + directory + "' holds " + std::to_string(writers.size()) + " event files written at the "
                        "same time, one per writer: each is read as a rank's, ranked in the order of their names (" +
                        mapping + (writers.size() > 8 ? ", ..." : "") + "); a directory per rank "
                        "(SummaryWriter(log_dir=f'runs/rank_{rank}')) names them");
    std::vector<int64_t> ranks(writers.size());
    for (size_t r = 0; r < ranks.size(); ++r) ranks[r] = static_cast<int64_t>(r);
    return ranks;
  }
  if (const auto ranks = ranks_from_names(names_below_their_ancestor(writers), "the TensorBoard runs' directories",
                                          warnings_))
    return *ranks;
  throw RankLogError("the TensorBoard runs " + paths() + " do not differ in a number alone (rank_0, rank_1, ...), "
                     "which would give their ranks: give one run (with a tag per rank, loss_0, loss_1, ...), or the "
                     "runs of one job, a directory per rank named by its rank");
}

void Reader::read_rows(const Writer& writer, int64_t fixed_rank, TextRows& out) {
  const size_t first_file = writer.steps.empty() ? 0 : writer.steps.by_step().begin()->second.file;
  ObjectRows rows(names_, fixed_rank, first_file, out);
  JsonObject object;
  char number[32];  // the shortest text that reads back as the value (nan, inf as they are)
  for (const auto& [step, s] : writer.steps.by_step()) {
    object.clear();
    if (!names_.mapped(kStep)) {
      JsonMember& member = object.add();
      member.name = names_[kStep];
      member.kind = JsonMember::Kind::number;
      member.text = std::to_string(step);
    }
    for (size_t k = 0; k < s.size(); ++k) {
      const Scalar& scalar = s[k];
      const std::string& tag = tags_.name(scalar.tag);
      if (!names_.mapped(kStep) && tag == names_[kStep]) continue;  // the event's step is the step
      JsonMember& member = object.add();
      member.name = tag;
      member.kind = JsonMember::Kind::number;
      member.text.assign(number, std::to_chars(number, number + sizeof number, scalar.value).ptr);
    }
    if (!rows.loss_named(object)) continue;  // another tag's step (an evaluation's, say)
    const size_t before = out.rows.size();
    rows.read(object, static_cast<size_t>(s.offset),
              [&] { return files_[s.file].name + " " + files_[s.file].position + " " + std::to_string(s.offset); });
    for (size_t i = before; i < out.rows.size(); ++i) out.rows[i].file = s.file;
  }
  rows.finish("'" + writer.path + "'");
}

RankLog Reader::read(const std::vector<std::string>& paths) {
  // The files by directory, in the order the directories come, each file once.
  std::vector<std::pair<std::string, std::vector<std::string>>> directories;
  for (const std::string& path : paths) {
    const std::string directory = fs::path(path).parent_path().lexically_normal().string();
    auto at = std::find_if(directories.begin(), directories.end(), [&](const auto& d) { return d.first == directory; });
    if (at == directories.end()) at = directories.insert(directories.end(), {directory, {}});
    if (std::find(at->second.begin(), at->second.end(), path) == at->second.end()) at->second.push_back(path);
  }
  std::vector<Writer> writers;
  for (auto& [directory, files] : directories)
    for (Writer& writer : writers_of(directory.empty() ? "." : directory, std::move(files)))
      writers.push_back(std::move(writer));
  fold_add_scalars_runs(writers);
  std::vector<const Writer*> ranked;
  for (const Writer& writer : writers) {
    if (has_loss(writer)) ranked.push_back(&writer);
  }
  const std::string loss_tags = "'" + text_for_message(names_[kLoss]) + "' (or '" + wide_.of(kLoss, 0) + "', ... " +
                                "with a tag per rank)";
  if (ranked.empty()) {
    std::string listed;
    for (const Writer& writer : writers)
      if (!writer.steps.empty()) listed += (listed.empty() ? "" : "; ") + writer.path + ": " + tags_of(writer);
    if (listed.empty()) {
      std::vector<std::string> runs;
      for (const auto& directory : directories) runs.push_back(directory.first);
      throw RankLogError("the TensorBoard runs " + list_for_message(runs, 8) + " hold no scalars");
    }
    throw RankLogError("no TensorBoard run logs a scalar tag " + loss_tags + "; the runs' scalar tags: " + listed +
                       "; map another tag with --columns loss=TAG");
  }
  for (const Writer& writer : writers)
    if (!writer.steps.empty() && std::find(ranked.begin(), ranked.end(), &writer) == ranked.end())
      warnings_.push_back("'" + writer.path + "': left out, no scalar tag " + loss_tags + " (its scalar tags: " +
                          tags_of(writer) + ")");
  TextRows out;
  if (ranked.size() == 1) {
    const Writer& writer = *ranked.front();
    if (!names_ranks(writer))
      throw RankLogError("'" + writer.path + "': one TensorBoard run, whose tag '" + text_for_message(names_[kLoss]) +
                         "' is one rank's: give every rank's run (the directory above them, or their directories), or "
                         "a run with a tag per rank (" + wide_.of(kLoss, 0) + ", " + wide_.of(kLoss, 1) + ", ...)");
    read_rows(writer, -1, out);
  } else {
    const std::vector<int64_t> ranks = ranks_of(ranked);
    for (size_t k = 0; k < ranked.size(); ++k) read_rows(*ranked[k], ranks[k], out);
  }
  out.warnings.insert(out.warnings.begin(), warnings_.begin(), warnings_.end());
  // Event files are a writer's sessions: the log knows where each later one resumed. A resume of every rank's writer
  // at one step is said once.
  out.records_sessions = true;
  for (const Writer* writer : ranked)
    out.resumed.insert(out.resumed.end(), writer->resumed.begin(), writer->resumed.end());
  std::sort(out.resumed.begin(), out.resumed.end(), [](const Resume& a, const Resume& b) { return a.step < b.step; });
  out.resumed.erase(std::unique(out.resumed.begin(), out.resumed.end(),
                                [](const Resume& a, const Resume& b) { return a.step == b.step; }),
                    out.resumed.end());
  std::string source = ranked.front()->path + " (TensorBoard run)";
  if (ranked.size() > 1) source += " and " + std::to_string(ranked.size() - 1) + " more run(s), one per rank";
  return assemble(source, files_, out, names_);
}

}  // namespace

RankLog read_tfevents_rank_logs(const std::vector<std::string>& paths, const ReadOptions& options) {
  try {
    return Reader(options).read(paths);
  } catch (const EventFileError& e) {
    throw RankLogError(e.what());
  }
}

}  // namespace lrkit::diagnostics
