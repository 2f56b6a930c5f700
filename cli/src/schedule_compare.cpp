#include "schedule_compare.hpp"

#include <cmath>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "command.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/series_file.hpp"
#include "lrkit/schedules/series_fit.hpp"
#include "lrkit/schedules/series_match.hpp"

namespace lrkit::cli {

namespace {

using lrkit::format_number;

std::string row_text(const schedules::SeriesRow& r) {
  return "step " + std::to_string(r.step) + " (logged " + format_number(r.logged) + ", schedule " +
         format_number(r.scheduled) + ": " + format_number(r.relative) + " relative)";
}

std::string row_json(const schedules::SeriesRow& r) {
  return "{\"step\": " + std::to_string(r.step) + ", \"logged\": " + format_number(r.logged) + ", \"schedule\": " +
         format_number(r.scheduled) + ", \"relative\": " + format_number(r.relative) + "}";
}

// Rows that a resumed session logged again and that replaced the first session's (event files).
std::string replaced_text(size_t replaced) {
  if (replaced == 0) return "";
  return " (" + std::to_string(replaced) + (replaced == 1 ? " row" : " rows") + " replaced by a resumed session's)";
}

// A step or a length that is 0 where the match has none.
std::string number_or_null(int64_t n) { return n == 0 ? "null" : std::to_string(n); }

std::string length_change_json(const schedules::SeriesMatch& m) {
  if (m.mistake != schedules::SeriesMistake::LengthChanged) return "null";
  const schedules::LengthChange& c = m.length_change;
  return "{\"before\": " + std::to_string(c.before) + ", \"after\": " + std::to_string(c.after) +
         ", \"last_step_before\": " + std::to_string(c.last_step_before) + ", \"first_step_after\": " +
         std::to_string(c.first_step_after) + "}";
}

std::string setting_json(const schedules::SeriesMatch& m) {
  if (m.mistake != schedules::SeriesMistake::OtherSetting) return "null";
  const schedules::OtherSettingFound& s = m.setting;
  return "{\"name\": " + json_string(s.name) + ", \"given\": " + (s.given.empty() ? "null" : json_string(s.given)) +
         ", \"value\": " + json_string(s.value) + ", \"spec\": " + json_string(s.spec) + ", \"lowest\": " +
         json_string(s.lowest) + ", \"highest\": " + json_string(s.highest) + ", \"highest_is_last\": " +
         (s.highest_is_last ? "true" : "false") + "}";
}

// The steps beside a column of rates: /train/lr -> /train/step, lr -> step.
std::string steps_beside(const std::string& column) {
  const auto slash = column.find_last_of('/');
  return slash == std::string::npos ? "step" : column.substr(0, slash + 1) + "step";
}

// The rates a run logged, with their steps as whole numbers; `option` (--compare, --fit) names the request in errors,
// as does the tolerance's check.
struct LoggedRates {
  schedules::Series series;
  std::vector<int64_t> steps;
};
LoggedRates read_logged_rates(const CompareRequest& request, const std::string& option) {
  if (!(request.tolerance >= 0.0) || !std::isfinite(request.tolerance))
    throw UsageError("--tolerance must be a finite number >= 0 (got " + format_number(request.tolerance) + ")");
  LoggedRates logged;
  try {
    logged.series = schedules::read_series_file(request.file, request.column, steps_beside(request.column),
                                                schedules::RepeatedSteps::Replace);
    logged.steps = schedules::series_steps(logged.series.steps, logged.series.values);
  } catch (const schedules::SeriesFileError& e) {
    throw UsageError(option + ": " + e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError(option + ": '" + request.file + "' " + e.what());
  }
  return logged;
}

// The first line of a verdict: the file (and the one read, where a directory stood for it), its rows and steps, the
// rows a resumed session's replaced, a last line cut by a kill, and the run's length where the file records it.
std::string rows_line(const CompareRequest& request, const LoggedRates& logged) {
  const size_t rows = logged.steps.size();
  const schedules::Series& series = logged.series;
  return request.file + (series.source.empty() ? "" : " (" + series.source + ")") + ": " + std::to_string(rows) +
         (rows == 1 ? " row" : " rows") + " of " + request.column +
         ", steps " + format_number(series.steps.front()) + ".." + format_number(series.steps.back()) +
         replaced_text(series.replaced) +
         (series.last_line_cut ? " (its last line, cut off by a kill mid-line, left out)" : "") +
         (series.run_steps > 0 ? ", of a run of " + std::to_string(series.run_steps) + " steps (its max_steps)" : "");
}

// The run's length: --steps, else the one the file records (a Trainer's max_steps).
std::optional<int64_t> run_length(const CompareRequest& request, const schedules::Series& series) {
  if (request.steps) return request.steps;
  if (series.run_steps > 0) return series.run_steps;
  return std::nullopt;
}

}  // namespace

int compare_with_log(const CompareRequest& request) {
  const LoggedRates logged = read_logged_rates(request, "--compare");
  const schedules::Series& series = logged.series;
  const std::vector<int64_t>& steps = logged.steps;
  // The run's length: what the caller says, else the one the log records, else the spec's own, else what the log
  // reached.
  const int64_t logged_end = steps.back() + 1;
  std::string length_from;
  const schedules::Schedule schedule = [&] {
    try {
      if (const std::optional<int64_t> length = run_length(request, series)) {
        if (!request.steps) length_from = ": the log's max_steps; --steps gives another";
        return schedules::parse_schedule(request.spec, length);
      }
      try {
        return schedules::parse_schedule(request.spec, std::nullopt);
      } catch (const schedules::SpecError&) {  // it needs the run's length: the log's
        length_from = ": the log's last step + 1; --steps gives the run's";
        return schedules::parse_schedule(request.spec, logged_end);
      }
    } catch (const schedules::SpecError& e) {
      throw UsageError(e.what());
    }
  }();
  // The rows passed series_steps and the tolerance its check above, so this throws nothing.
  const auto match = schedules::match_checked_series(schedule, steps, series.values, request.tolerance);
  const std::string length =
      schedule.bounded() ? std::to_string(schedule.total()) + " steps" + length_from : "no end";
  const schedules::SeriesRow& worst = match.worst_detail;
  const std::string why = schedules::explain(match);
  if (request.format == TableFormat::Json) {
    std::ostringstream out;
    out << "{\"file\": " << json_string(request.file) << ", \"column\": " << json_string(request.column)
        << ", \"rows\": " << match.compared << ", \"first_step\": " << format_number(series.steps.front())
        << ", \"last_step\": " << format_number(series.steps.back()) << ", \"replaced_rows\": " << series.replaced
        << ", \"spec\": "
        << json_string(schedule.to_spec()) << ", \"steps\": "
        << (schedule.bounded() ? std::to_string(schedule.total()) : "null")
        << ", \"tolerance\": " << format_number(request.tolerance) << ", \"run_steps\": "
        << number_or_null(series.run_steps) << ", \"last_line_cut\": " << (series.last_line_cut ? "true" : "false")
        << ", \"follows\": "
        << (match.follows ? "true" : "false") << ", \"worst\": " << row_json(worst) << ", \"first_difference\": "
        << (match.follows ? "null" : row_json(match.first_off_detail))
        << ", \"mistake\": " << json_string(schedules::mistake_name(match.mistake)) << ", \"amount\": "
        << format_number(match.amount) << ", \"restarts\": [" << schedules::steps_text(match.restarts)
        << "], \"other_length\": " << number_or_null(match.other_length) << ", \"other_length_last\": "
        << number_or_null(match.other_length_last) << ", \"left_end_value_at\": "
        << number_or_null(match.left_end_value_at) << ", \"length_change\": " << length_change_json(match)
        << ", \"setting\": " << setting_json(match)
        << ", \"explanation\": " << (why.empty() ? "null" : json_string(why)) << "}\n";
    std::cout << out.str();
  } else {
    std::cout << rows_line(request, logged) << ", against " << schedule.to_spec() << " (" << length << ")\n";
    if (match.follows) {
      std::cout << "follows it: the worst relative difference is " << format_number(worst.relative) << " at step "
                << worst.step << " (tolerance " << format_number(request.tolerance) << ")\n";
    } else {
      std::cout << "differs from " << row_text(match.first_off_detail)
                << (match.worst_row == match.first_off_row ? ", the worst" : "; the worst is at " + row_text(worst))
                << " (tolerance " << format_number(request.tolerance) << ")\n";
      std::cout << (why.empty() ? "no single loop mistake explains it (the schedule read up to " +
                                      std::to_string(schedules::kLargestMistakenShift) +
                                      " steps ahead or behind, restarted, run 2 to " +
                                      std::to_string(schedules::kLargestMistakenFactor) +
                                      " times as fast or as slow, built for another length, scaled, or with "
                                      "one other number in the spec)"
                                : why)
                << "\n";
    }
  }
  return match.follows ? kExitOk : kExitFailure;
}

int fit_log(const CompareRequest& request) {
  const LoggedRates logged = read_logged_rates(request, "--fit");
  const std::optional<int64_t> length = run_length(request, logged.series);
  const auto fit = schedules::fit_checked_series(logged.steps, logged.series.values, length, request.tolerance);
  if (fit.spec.empty())
    throw UsageError("--fit: '" + request.file + "' holds no rate >= 0 to fit a schedule to");
  const schedules::SeriesRow& worst = fit.match.worst_detail;
  if (request.format == TableFormat::Json) {
    std::cout << "{\"file\": " << json_string(request.file) << ", \"column\": " << json_string(request.column)
              << ", \"rows\": " << logged.steps.size() << ", \"first_step\": " << logged.steps.front()
              << ", \"last_step\": " << logged.steps.back() << ", \"replaced_rows\": " << logged.series.replaced
              << ", \"fits\": " << (fit.fits ? "true" : "false") << ", \"spec\": " << json_string(fit.spec)
              << ", \"steps\": " << fit.total << ", \"tolerance\": " << format_number(request.tolerance)
              << ", \"run_steps\": " << number_or_null(logged.series.run_steps)
              << ", \"last_line_cut\": " << (logged.series.last_line_cut ? "true" : "false")
              << ", \"worst\": " << row_json(worst) << ", \"first_difference\": "
              << (fit.match.follows ? "null" : row_json(fit.match.first_off_detail)) << "}\n";
  } else {
    std::cout << rows_line(request, logged) << "\n";
    if (fit.fits) {
      std::cout << "fits " << fit.spec << " over " << fit.total << " steps: the worst relative difference is "
                << format_number(worst.relative) << " at step " << worst.step << " (tolerance "
                << format_number(request.tolerance) << ")\n";
    } else {
      std::cout << "no spec of the families --fit tries (lrkit schedule --help), from the numbers the log shows and "
                   "one found, fits it; the closest, "
                << fit.spec << " over " << fit.total << " steps, differs from " << row_text(fit.match.first_off_detail)
                << " (tolerance " << format_number(request.tolerance) << ")"
                << (length ? "" : "; the run's length was taken as the last step or the last step + 1: "
                                  "--steps gives it")
                << "\n";
    }
  }
  return fit.fits ? kExitOk : kExitFailure;
}

}  // namespace lrkit::cli
