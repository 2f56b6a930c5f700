#include "schedule_output.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <vector>

#include "command.hpp"
#include "lrkit/common/output_file.hpp"
#include "lrkit/common/text_file.hpp"
#include "lrkit/h5/file.hpp"
#include "lrkit/h5/handle.hpp"
#include "lrkit/schedules/spec.hpp"

namespace lrkit::cli {

using schedules::format_number;

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

std::vector<int64_t> row_steps(int64_t steps, int64_t every) {
  std::vector<int64_t> rows;
  for (int64_t t = 0; t < steps; t += every) rows.push_back(t);
  rows.push_back(steps);
  return rows;
}

std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// The text format a table file's name asks for, or none for HDF5.
std::optional<TableFormat> table_file_format(const std::string& path) {
  const std::string extension = std::filesystem::path(path).extension().string();
  if (extension == ".h5") return std::nullopt;
  if (extension == ".csv") return TableFormat::Csv;
  if (extension == ".tsv") return TableFormat::Tsv;
  throw UsageError("--out '" + path + "' must end in .h5 (HDF5), .csv or .tsv: the table's form follows the name");
}

}  // namespace

void write_table(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int64_t every,
                 TableFormat format, std::optional<MomentumRange> momentum) {
  const auto rows = row_steps(steps, every);
  // The caller checked that the schedule cycles a momentum.
  const auto momentum_at = [&](int64_t t) {
    return format_number(*schedule.cycled_momentum(t, momentum->base, momentum->max));
  };
  if (format == TableFormat::Json) {
    out << "{\"spec\": " << json_string(schedule.to_spec()) << ", \"steps\": " << steps << ", \"step\": [";
    for (size_t i = 0; i < rows.size(); ++i) out << (i ? ", " : "") << rows[i];
    out << "], \"lr\": [";
    for (size_t i = 0; i < rows.size(); ++i) out << (i ? ", " : "") << format_number(schedule(rows[i]));
    if (momentum) {
      out << "], \"momentum\": [";
      for (size_t i = 0; i < rows.size(); ++i) out << (i ? ", " : "") << momentum_at(rows[i]);
    }
    out << "]}\n";
    return;
  }
  const char sep = format == TableFormat::Csv ? ',' : '\t';
  out << "step" << sep << "lr" << (momentum ? std::string(1, sep) + "momentum" : "") << "\n";
  for (int64_t t : rows) {
    out << t << sep << format_number(schedule(t));
    if (momentum) out << sep << momentum_at(t);
    out << '\n';
  }
}

void write_summary(std::ostream& out, const schedules::Summary& s, const std::string& spec, bool json) {
  if (json) {
    out << "{\"spec\": " << json_string(spec) << ", \"steps\": " << s.steps << ", \"peak\": " << format_number(s.peak)
        << ", \"peak_step\": " << s.peak_step << ", \"warmup_end\": " << s.warmup_end << ", \"decay_start\": ";
    if (s.decay_start) {
      out << *s.decay_start;
    } else {
      out << "null";
    }
    out << ", \"final\": " << format_number(s.final_value) << ", \"checkpoints\": [";
    for (size_t i = 0; i < s.checkpoints.size(); ++i) out << (i ? ", " : "") << s.checkpoints[i];
    out << "], \"phases\": [";
    for (size_t i = 0; i < s.phases.size(); ++i)
      out << (i ? ", " : "") << "{\"kind\": \"" << schedules::phase_kind_name(s.phases[i].kind)
          << "\", \"begin\": " << s.phases[i].begin << ", \"end\": " << s.phases[i].end << "}";
    out << "]}\n";
    return;
  }
  out << "spec         " << spec << "\n"
      << "steps        " << s.steps << "\n"
      << "peak         " << format_number(s.peak) << " at step " << s.peak_step << "\n"
      << "warmup ends  " << s.warmup_end << "\n"
      << "decay starts " << (s.decay_start ? std::to_string(*s.decay_start) : std::string("(no decay)")) << "\n"
      << "final        " << format_number(s.final_value) << " at step " << s.steps << "\n";
  if (!s.checkpoints.empty()) {
    out << "checkpoints ";
    for (int64_t c : s.checkpoints) out << " " << c;
    out << "\n";
  }
  // A long run of short cycles has thousands of phases: the line shows its first and last ones, the JSON all of them.
  constexpr size_t kFirstShown = 8, kLastShown = 2;
  const size_t count = s.phases.size();
  out << "phases      ";
  for (size_t i = 0; i < count; ++i) {
    if (count > kFirstShown + kLastShown + 1 && i == kFirstShown) {
      const size_t hidden = count - kFirstShown - kLastShown;
      out << " ... (" << hidden << " more; --format json lists all " << count << ") ...";
      i += hidden - 1;
      continue;
    }
    const auto& p = s.phases[i];
    out << " " << schedules::phase_kind_name(p.kind) << "[" << p.begin << "," << p.end << ")";
  }
  out << "\n";
}

void write_branches(std::ostream& out, const schedules::DecayBranches& plan, TableFormat format) {
  int64_t separate = 0;
  for (const auto& b : plan.branches) separate += b.budget;
  if (format == TableFormat::Json) {
    out << "{\"main\": {\"spec\": " << json_string(plan.main.to_spec()) << ", \"total_steps\": " << plan.main.total()
        << ", \"from\": 0, \"to\": " << plan.main_steps() << "}, \"branches\": [";
    for (size_t i = 0; i < plan.branches.size(); ++i) {
      const auto& b = plan.branches[i];
      out << (i ? ", " : "") << "{\"budget\": " << b.budget << ", \"from\": " << b.fork << ", \"to\": " << b.budget << "}";
    }
    out << "], \"updates\": " << plan.steps() << ", \"separate_updates\": " << separate << "}\n";
    return;
  }
  const char sep = format == TableFormat::Tsv ? '\t' : ',';
  out << "run" << sep << "from" << sep << "to\n";
  out << "main" << sep << 0 << sep << plan.main_steps() << "\n";
  for (const auto& b : plan.branches) out << "B" << b.budget << sep << b.fork << sep << b.budget << "\n";
}

void write_plot(std::ostream& out, const schedules::Schedule& schedule, int64_t steps, int width, int height) {
  std::vector<double> column(static_cast<size_t>(width));
  double top = 0.0;
  for (int c = 0; c < width; ++c) {
    const double t = static_cast<double>(steps) * c / std::max(width - 1, 1);
    column[static_cast<size_t>(c)] = schedule.at(t);
    top = std::max(top, column[static_cast<size_t>(c)]);
  }
  if (top <= 0) top = 1.0;
  std::vector<std::string> grid(static_cast<size_t>(height), std::string(static_cast<size_t>(width), ' '));
  for (int c = 0; c < width; ++c) {
    const double frac = column[static_cast<size_t>(c)] / top;
    const int row = height - 1 - static_cast<int>(std::lround(frac * (height - 1)));
    grid[static_cast<size_t>(std::clamp(row, 0, height - 1))][static_cast<size_t>(c)] = '*';
  }
  const std::string top_label = short_number(top);
  const size_t label_width = std::max<size_t>(top_label.size(), 1);
  for (int r = 0; r < height; ++r) {
    std::string label = r == 0 ? top_label : r == height - 1 ? "0" : "";
    label.insert(0, label_width - label.size(), ' ');
    out << label << " |" << grid[static_cast<size_t>(r)] << "\n";
  }
  std::string axis(static_cast<size_t>(width), '-');
  for (int64_t c : schedule.checkpoints()) {
    if (c > steps) continue;
    const auto col = static_cast<size_t>(std::lround(static_cast<double>(c) / static_cast<double>(steps) * (width - 1)));
    axis[std::min(col, axis.size() - 1)] = '^';
  }
  out << std::string(label_width, ' ') << " +" << axis << "\n";
  const std::string right = std::to_string(steps);
  out << std::string(label_width + 2, ' ') << "0" << std::string(static_cast<size_t>(std::max<int64_t>(
                                                       width - 1 - static_cast<int64_t>(right.size()), 1)), ' ')
      << right << (schedule.checkpoints().empty() ? "  (step)\n" : "  (step; ^ marks checkpoints)\n");
}

namespace {

void write_hdf5(const std::string& path, const schedules::Schedule& schedule, int64_t steps) {
  std::vector<int64_t> step(static_cast<size_t>(steps) + 1);
  std::vector<double> lr(step.size());
  for (int64_t t = 0; t <= steps; ++t) {
    step[static_cast<size_t>(t)] = t;
    lr[static_cast<size_t>(t)] = schedule(t);
  }
  // Written beside the file and renamed over it, as the text tables are: a kill or a full disk mid-write leaves the
  // file it replaces (a refined schedule a run may still read) whole.
  h5::write_file_atomically(path, [&](h5::Writer& writer) {
    writer.write_series("/schedule/step", step);
    writer.write_series("/schedule/lr", lr);
    writer.write_series("/schedule/checkpoints", schedule.checkpoints());
    writer.set_attribute("/schedule", "spec", schedule.to_spec());
    writer.set_attribute("/schedule", "steps", steps);
    writer.set_attribute("/", "lrkit_version", std::string(LRKIT_VERSION));
  });
}

}  // namespace

void check_table_file(const std::string& path) { table_file_format(path); }

std::string write_table_file(const std::string& path, const schedules::Schedule& schedule, int64_t steps) {
  const auto format = table_file_format(path);
  const std::string file = "table(file=" + schedules::format_word(path);
  if (const auto problem = output_file_problem(path)) throw UsageError("cannot write '" + path + "': " + *problem);
  // What output_file_problem did not rule out is a failure at run time (a full disk): exit 1, not 2.
  if (!format) {
    write_hdf5(path, schedule, steps);
    return file + ", column=/schedule/lr, steps=/schedule/step)";
  }
  std::ostringstream table;
  write_table(table, schedule, steps, 1, *format);
  write_text_atomically(path, table.str());
  return file + ")";
}

}  // namespace lrkit::cli
