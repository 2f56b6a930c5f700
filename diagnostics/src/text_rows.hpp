// What the readers of per-rank logs that are not lrkit run logs share: the rows they read (a step, a rank and its
// values), gridded by assemble() into RankLog's [step, rank] layout; and the reader of rows given as JSON objects
// (a JSON-lines log's lines, a Weights & Biases run's history rows).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lrkit/common/json_object.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "rank_log_parts.hpp"

namespace lrkit::diagnostics {

// The file's name for each field.
struct Names {
  std::string of[5];
  explicit Names(const ReadOptions& o) {
    for (size_t f = 0; f < 5; ++f) {
      const auto mapped = o.columns.find(kFields[f]);
      of[f] = mapped == o.columns.end() ? kFields[f] : mapped->second;
    }
  }
  const std::string& operator[](Field f) const { return of[f]; }
  bool mapped(Field f) const { return of[f] != kFields[f]; }
  // " (mapped from loss)" where the file's name is not the field's own, for a message naming a missing one.
  std::string mapped_from(Field f) const { return mapped(f) ? std::string(" (mapped from ") + kFields[f] + ")" : ""; }
};

// Whether a row gives an optional field (a gradient norm, a cosine): not at all; as a CSV cell left empty (NaN, as
// pandas writes one, unless every rank's is empty at its step: the step then logs none); or as a value.
enum class Given : uint8_t { kAbsent, kBlank, kValue };

struct Row {
  double step = 0;
  int64_t rank = 0;
  double loss = 0, grad_norm = std::nan(""), cos_to_mean = std::nan("");
  Given grad_norm_given = Given::kAbsent, cos_given = Given::kAbsent;
  size_t file = 0;      // index into the files read
  size_t position = 0;  // where in it: a line, or a byte (File::position)
};

// A file the rows were read from, as a message names a row of it: "NAME line 12", "NAME history row at byte 40".
struct File {
  std::string name;
  std::string position = "line";
};

// The rows read, and what was left out of them.
struct TextRows {
  std::vector<Row> rows;
  std::vector<std::string> warnings;
  // A log that marks its sessions (a DispersionHook's JSON lines: "session" on the rows of each session's first
  // step; a W&B run's resumed sessions): whether it does, and the resumes' steps in the order they ran.
  bool records_sessions = false;
  std::vector<Resume> resumed;
};

// The rows of every (step, rank) pair into the [step, rank] layout, named `source`. A step without a row for every
// rank is skipped with a warning; a pair given twice is an error, named at its second row. A step gives a gradient
// norm (a cosine) for every rank or for none: a loop may log them at some steps only. Rows without any are a log of
// the loss alone (said in a warning, which names the field as `names` do).
RankLog assemble(const std::string& source, const std::vector<File>& files, const TextRows& text, const Names& names);

// Rows from JSON objects, one per step and rank (a rank field; or, with `fixed_rank` >= 0, one rank's file) or one
// per step with a field per rank and field (NAME_0, NAME_1, ...: the layout the first object tells).
class ObjectRows {
 public:
  ObjectRows(const Names& names, int64_t fixed_rank, size_t file, TextRows& out);
  ~ObjectRows();
  // Adds the object's rows; `position` is where it is in the file, `where()` names it in an error.
  void read(const JsonObject& object, size_t position, const std::function<std::string()>& where);
  // The object's loss: the member of the field's own name, else the first of a rank's (a row with a field per
  // rank); null where it names none.
  const JsonMember* loss_named(const JsonObject& object) const;
  // Says in a warning which steps were left out (rows that held no rank's value), naming the file `source`.
  void finish(const std::string& source);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace lrkit::diagnostics
