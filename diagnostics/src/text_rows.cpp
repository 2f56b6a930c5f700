// The rows every text reader of per-rank logs gives, gridded into RankLog's [step, rank] layout (assemble), and the
// rows of JSON objects (ObjectRows): a JSON-lines log's lines, a Weights & Biases run's history rows.
#include "text_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#include "lrkit/common/message_text.hpp"
#include "text_fields.hpp"

namespace lrkit::diagnostics {

// The rows are ordered by sorting their indices (a tree of steps and ranks, before, made two allocations a row).
RankLog assemble(const std::string& source, const std::vector<File>& files, const TextRows& text, const Names& names) {
  const std::vector<Row>& rows = text.rows;
  if (rows.empty()) throw RankLogError(source + ": no rows");
  const auto where = [&](const Row& r) {
    return files[r.file].name + " " + files[r.file].position + " " + std::to_string(r.position);
  };
  int64_t ranks = 0;
  for (const Row& r : rows) {
    if (r.rank < 0 || r.rank > 65535) throw RankLogError(where(r) + ": rank " + std::to_string(r.rank) + " is out of range");
    ranks = std::max(ranks, r.rank + 1);
  }
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  const auto key = [&](size_t i) { return std::make_pair(rows[i].step, rows[i].rank); };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  // A pair given twice: the row that repeats it first in the files' order (each pair's rows stay in that order).
  size_t repeated = rows.size();
  for (size_t k = 1; k < order.size(); ++k)
    if (key(order[k]) == key(order[k - 1])) repeated = std::min(repeated, order[k]);
  if (repeated < rows.size()) {
    const Row& r = rows[repeated];
    throw RankLogError(where(r) + ": step " + std::to_string(static_cast<long long>(r.step)) + " rank " +
                       std::to_string(r.rank) + " appears twice");
  }
  // A step gives an optional field for every rank or for none (a loop logging gradient norms every k steps): a row
  // without one beside a row of its step with one would be read as a NaN, which the report calls a divergence.
  const auto lacks_field = [&](const Row& lacking, const Row& giving, Field field, const char* what) {
    const std::string per_rank = WidePattern(names[field]).name(static_cast<size_t>(lacking.rank));
    return RankLogError(where(lacking) + ": no " + what + " for rank " + std::to_string(lacking.rank) + " ('" +
                        text_for_message(names[field]) + "', or '" + text_for_message(per_rank) + "' with a field per "
                        "rank), where " + where(giving) + " gives rank " + std::to_string(giving.rank) + "'s at the "
                        "same step: a step gives one for every rank or for none");
  };
  RankLog log;
  log.source = source;
  log.ranks = ranks;
  log.warnings = text.warnings;
  log.records_sessions = text.records_sessions;
  const size_t per_step = static_cast<size_t>(ranks);
  log.steps.reserve(rows.size() / per_step);
  log.loss.reserve(rows.size());
  // An optional field's values by step and rank (NaN at the steps that log none), and which steps log it.
  struct Optional {
    Field field;
    const char* what;
    double Row::*value;
    Given Row::*given;
    std::vector<double>* values;
    std::vector<uint8_t>* logged;
    bool in_rows = false;  // some row names it
    size_t steps_logged = 0;
  };
  Optional optional[] = {
      {kGradNorm, "gradient norm", &Row::grad_norm, &Row::grad_norm_given, &log.grad_norm, &log.grad_norm_logged},
      {kCosToMean, "cosine", &Row::cos_to_mean, &Row::cos_given, &log.cos_to_mean, &log.cos_to_mean_logged}};
  for (Optional& o : optional) {
    o.in_rows = std::any_of(rows.begin(), rows.end(), [&](const Row& r) { return r.*o.given != Given::kAbsent; });
    if (o.in_rows) o.values->reserve(rows.size());
  }
  LeftOutSteps skipped;
  for (size_t begin = 0, end = 0; begin < order.size(); begin = end) {  // [begin, end): one step's rows, by rank
    end = begin + 1;
    while (end < order.size() && rows[order[end]].step == rows[order[begin]].step) ++end;
    const double step = rows[order[begin]].step;
    if (end - begin != per_step) {
      skipped.add([&] {  // the first rank it lacks
        int64_t missing = 0;
        while (begin + static_cast<size_t>(missing) < end && rows[order[begin + missing]].rank == missing) ++missing;
        return "step " + std::to_string(static_cast<long long>(step)) + " (no row for rank " + std::to_string(missing) + ")";
      });
      continue;
    }
    log.steps.push_back(step);
    for (size_t k = begin; k < end; ++k) log.loss.push_back(rows[order[k]].loss);
    for (Optional& o : optional) {
      if (!o.in_rows) continue;
      const Row* giving = nullptr;  // a row of the step with a value
      for (size_t k = begin; k < end && !giving; ++k)
        if (rows[order[k]].*o.given == Given::kValue) giving = &rows[order[k]];
      for (size_t k = begin; k < end; ++k) {
        const Row& r = rows[order[k]];
        if (giving && r.*o.given == Given::kAbsent) throw lacks_field(r, *giving, o.field, o.what);
        o.values->push_back(giving ? r.*o.value : std::nan(""));
      }
      o.logged->push_back(giving ? 1 : 0);
      o.steps_logged += giving ? 1 : 0;
    }
  }
  if (log.steps.empty()) throw RankLogError(source + ": no step has a row for every one of its " + std::to_string(ranks) + " ranks");
  if (skipped.count > 0)
    log.warnings.push_back(source + ": skipped " + std::to_string(skipped.count) + " step(s) missing a rank's row: " +
                           skipped.listed());
  for (Optional& o : optional) {
    if (o.steps_logged == 0) {  // none, or only empty cells: no such field
      if (names.mapped(o.field))  // a name the caller gave must be there
        throw RankLogError(source + ": no row gives the " + o.what + " '" + text_for_message(names[o.field]) + "'" +
                           names.mapped_from(o.field) + " (or '" +
                           text_for_message(WidePattern(names[o.field]).name(0)) + "', ... with a field per rank)");
      o.values->clear();
      o.logged->clear();
    } else if (o.steps_logged == log.steps.size()) {
      o.logged->clear();  // every step: nothing to mark
    }
  }
  if (log.grad_norm.empty()) {
    const std::string rank_0s = WidePattern(names[kGradNorm]).name(0);
    log.warnings.push_back(source + ": no gradient norms ('" + text_for_message(names[kGradNorm]) + "', or '" +
                           text_for_message(rank_0s) + "', ... with a field per rank): the loss alone is diagnosed; "
                           "map another name with --columns grad_norm=NAME");
  }
  if (text.records_sessions) {  // the log's first row starts its first session: a resume there resumed no row it holds
    std::vector<Resume> sessions{{log.steps.front(), std::nullopt}};
    sessions.insert(sessions.end(), text.resumed.begin(), text.resumed.end());
    log.resumes = resumes_with_rows(sessions, log.steps);
  }
  return log;
}

namespace {

// The members of a JSON row with a field per rank, sorted by rank and field in one pass over the object: looking each
// rank's gradient norm and cosine up by name made a row of R ranks cost R^2 name comparisons.
class WideRow {
 public:
  static constexpr Field kFields[3] = {kLoss, kGradNorm, kCosToMean};
  struct Members {
    const JsonMember* first[3] = {};   // by kFields' order; null: the row has no such field for the rank
    const JsonMember* repeat[3] = {};  // a second member of the same name
  };
  void read(const JsonObject& object, const WideNames& names) {
    ++row_;
    ranks_.clear();
    for (size_t i = 0; i < object.size(); ++i)
      for (size_t f = 0; f < 3; ++f) {
        const int64_t k = names.rank_of(kFields[f], object[i].name);
        if (k < 0) continue;
        Members& m = of_rank(static_cast<size_t>(k));
        if (m.first[f]) {
          if (!m.repeat[f]) m.repeat[f] = &object[i];
          continue;
        }
        m.first[f] = &object[i];
        if (f == 0) ranks_.push_back(static_cast<size_t>(k));
      }
  }
  const std::vector<size_t>& ranks() const { return ranks_; }  // those whose loss the row names, in its order
  const Members& of(size_t rank) const { return members_[rank]; }

 private:
  Members& of_rank(size_t rank) {  // cleared once per row, as the row first names the rank
    if (members_.size() <= rank) {
      members_.resize(rank + 1);
      row_of_.resize(rank + 1, 0);
    }
    if (row_of_[rank] != row_) {
      members_[rank] = Members();
      row_of_[rank] = row_;
    }
    return members_[rank];
  }
  std::vector<Members> members_;
  std::vector<size_t> row_of_;
  size_t row_ = 0;
  std::vector<size_t> ranks_;
};

}  // namespace

struct ObjectRows::State {
  State(const Names& n, int64_t rank, size_t f, TextRows& o)
      : names(n), wide_names(n), fixed_rank(rank), file(f), out(o) {}
  const Names& names;
  WideNames wide_names;
  int64_t fixed_rank;
  size_t file;
  TextRows& out;
  // The file's layout, told by its first row: a rank field (or a file of one rank), or a field per rank.
  enum class Layout { unknown, per_rank_row, per_rank_field } layout = Layout::unknown;
  WideRow wide_row;  // reused
  ValuelessSteps valueless;
  void read(const JsonObject& object, size_t number, const std::function<std::string()>& where);
};

ObjectRows::ObjectRows(const Names& names, int64_t fixed_rank, size_t file, TextRows& out)
    : state_(std::make_unique<State>(names, fixed_rank, file, out)) {}

ObjectRows::~ObjectRows() = default;

const JsonMember* ObjectRows::loss_named(const JsonObject& object) const {
  if (const JsonMember* loss = object.find(state_->names[kLoss])) return loss;
  for (size_t i = 0; i < object.size(); ++i)
    if (state_->wide_names.rank_of(kLoss, object[i].name) >= 0) return &object[i];
  return nullptr;
}

void ObjectRows::finish(const std::string& source) { state_->valueless.warn(source, state_->out.warnings); }

void ObjectRows::read(const JsonObject& object, size_t position, const std::function<std::string()>& where) {
  state_->read(object, position, where);
}

void ObjectRows::State::read(const JsonObject& object, size_t number, const std::function<std::string()>& where) {
  // Names are looked up whole: "train/loss" is one key, not a path. A field read twice is ambiguous (Python's json
  // reads the last, Boost's reader, used before, the first): refused.
  const auto twice = [&](const std::string& name) {
    return RankLogError(where() + ": field '" + text_for_message(name) +
                        "' appears twice, and which one to read is not clear");
  };
  const auto find_once = [&](const std::string& name) {
    const JsonMember* repeat = nullptr;
    const JsonMember* member = object.find(name, &repeat);
    if (repeat) throw twice(name);
    return member;
  };
  // `per_rank`: a missing field's message says how a row with a field per rank names them.
  const auto member_named = [&](const std::string& name, Field f, bool per_rank = false) -> const JsonMember& {
    const JsonMember* member = find_once(name);
    if (!member)
      throw RankLogError(where() + ": no field '" + name + "'" + names.mapped_from(f) +
                         (per_rank ? " (" + wide_hint(wide_names, "a row with a field") + ")" : ""));
    return *member;
  };
  const auto in_field = [&](const std::string& name) { return [&] { return where() + " field " + name; }; };
  // null: a writer's missing or non-finite value, read as NaN (the report's NaN/Inf section then names it).
  const auto value_of = [&](const JsonMember& member, Field f) {
    return member.text == "null" ? std::nan("") : parse_value(f, member.text, in_field(member.name));
  };
  const auto value = [&](const std::string& name, Field f, bool per_rank = false) {
    return value_of(member_named(name, f, per_rank), f);
  };
  const double step = parse_step(member_named(names[kStep], kStep).text, in_field(names[kStep]));
  const JsonMember* rank = fixed_rank < 0 ? find_once(names[kRank]) : nullptr;
  if (layout == Layout::unknown) {
    bool per_rank_field = false;
    for (size_t i = 0; i < object.size() && fixed_rank < 0 && !rank && !per_rank_field; ++i)
      per_rank_field = wide_names.rank_of(kLoss, object[i].name) >= 0;
    layout = per_rank_field ? Layout::per_rank_field : Layout::per_rank_row;
  }
  const bool wide = layout == Layout::per_rank_field;
  if (fixed_rank < 0 && !wide && !rank) member_named(names[kRank], kRank, true);  // names what is missing
  if (wide && rank)  // a row of the other layout: its loss would be read as no rank's
    throw RankLogError(where() + ": a field '" + text_for_message(names[kRank]) + "' in a file whose first row has a "
                       "field per rank (" + wide_names.of(kLoss, 0) + ", ...); a file holds one layout");
  // Gradient norms and cosines are optional, and may be logged at some steps only (assemble).
  const auto add_row = [&](int64_t rank_value, double loss, const JsonMember* grad_norm, const JsonMember* cosine) {
    Row r;
    r.step = step;
    r.rank = rank_value;
    r.loss = loss;
    if (grad_norm) {
      r.grad_norm = value_of(*grad_norm, kGradNorm);
      r.grad_norm_given = Given::kValue;
    }
    if (cosine) {
      r.cos_to_mean = value_of(*cosine, kCosToMean);
      r.cos_given = Given::kValue;
    }
    r.file = file;
    r.position = number;
    out.rows.push_back(r);
  };
  if (wide) {
    // A row with a field per rank holds the ranks whose loss it names, in any order; a rank it lacks has no row at
    // this step (the step is then skipped with a warning, as a long table's would be).
    wide_row.read(object, wide_names);
    if (wide_row.ranks().empty()) valueless.add(step);
    for (const size_t k : wide_row.ranks()) {
      const WideRow::Members& m = wide_row.of(k);
      for (const JsonMember* repeat : m.repeat)
        if (repeat) throw twice(repeat->name);
      add_row(static_cast<int64_t>(k), value_of(*m.first[0], kLoss), m.first[1], m.first[2]);
    }
  } else {
    const int64_t rank_value = fixed_rank >= 0 ? fixed_rank : parse_rank(rank->text, in_field(names[kRank]));
    const double loss = value(names[kLoss], kLoss);
    add_row(rank_value, loss, find_once(names[kGradNorm]), find_once(names[kCosToMean]));
  }
  // The hook's mark (the loop's settings are not the hook's to know: no "changed"); a field "session" of the
  // user's own, with other values, is not one.
  if (const JsonMember* session = find_once("session")) {
    const std::string& kind = session->text;
    out.records_sessions = out.records_sessions || kind == "fresh" || kind == "resume";
    if (kind == "resume") out.resumed.push_back({step, std::nullopt});
  }
}

}  // namespace lrkit::diagnostics
