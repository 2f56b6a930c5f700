// Renderings of a schedule for `lrkit schedule`: tables (csv, tsv, json), the
// summary, a terminal plot, and an HDF5 table.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/summary.hpp"

namespace lrkit::cli {

enum class TableFormat { Csv, Tsv, Json };

// Rows for steps 0, every, 2 every, ..., always ending with `steps` itself.
void write_table(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int64_t every,
                 TableFormat format);
void write_summary(std::ostream& out, const schedules::Summary& summary, const std::string& spec, bool json);
void write_plot(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int width, int height);
// /schedule/step and /schedule/lr (every step 0..steps), /schedule/checkpoints,
// with the spec and total as attributes.
void write_hdf5(const std::string& path, const schedules::Schedule& schedule, int64_t steps);

}  // namespace lrkit::cli
