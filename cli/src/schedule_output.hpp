// Renderings of a schedule for `lrkit schedule`: tables (csv, tsv, json), the
// summary, a terminal plot, table files (HDF5, CSV, TSV), and the plan of a
// budget sweep with decay branches.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/summary.hpp"

namespace lrkit::cli {

enum class TableFormat { Csv, Tsv, Json };

// `text` as a JSON string literal, quotes included.
std::string json_string(const std::string& text);

// The momentum range of `--momentum BASE,MAX`: a column of the momentum the schedule cycles against its rate.
struct MomentumRange {
  double base, max;
};

// Rows for steps 0, every, 2 every, ..., always ending with `steps` itself; with `momentum`, a momentum column.
void write_table(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int64_t every,
                 TableFormat format, std::optional<MomentumRange> momentum = std::nullopt);
void write_summary(std::ostream& out, const schedules::Summary& summary, const std::string& spec, bool json);
// The runs of a sweep with decay branches, each with the updates it trains (from..to-1): the main run, then each
// budget's branch, which starts from the main run's state after `from` updates.
void write_branches(std::ostream& out, const schedules::DecayBranches& plan, TableFormat format);
void write_plot(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int width, int height);
// A file holding the whole table (every step 0..steps), in the form its name ends in: .h5 (HDF5:
// /schedule/step, /schedule/lr, /schedule/checkpoints, the spec and total as attributes), .csv or .tsv
// (step and lr columns). Refuses any other name (UsageError naming it and the forms), before anything is
// computed when called first.
void check_table_file(const std::string& path);
// Writes the table file (a text one atomically) and returns the spec that reads it back, table(file=...).
std::string write_table_file(const std::string& path, const schedules::Schedule& schedule, int64_t steps);

}  // namespace lrkit::cli
