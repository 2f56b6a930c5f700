// `lrkit diagnose` for Python (lrkit.diagnose): the silent-inconsistency report on an lrkit run log, a run
// directory, or per-rank CSV / JSON-lines logs, as the command gives it. A pip-installed lrkit has no command line.
// And the per-rank logs themselves, as the report reads them (lrkit.read_log of a CSV / JSON-lines log).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "lrkit/diagnostics/dispersion.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "lrkit/diagnostics/report.hpp"

namespace py = pybind11;

namespace lrkit::python {
namespace {

// lrkit.diagnosis.column_mapping's: a str as the command's --columns takes it, or a list of (field, name) str pairs
// (a dict's items, whose names may hold a comma); "" or [] maps nothing.
std::map<std::string, std::string> columns_from_python(const py::object& columns) {
  if (py::isinstance<py::str>(columns)) {
    const std::string given = text_from_python(columns);
    return given.empty() ? std::map<std::string, std::string>() : diagnostics::parse_column_mapping(given);
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& entry : columns.cast<py::list>()) {
    const auto pair = entry.cast<py::tuple>();
    entries.emplace_back(text_from_python(pair[0]), text_from_python(pair[1]));
  }
  return diagnostics::column_mapping(entries);
}

// The logs given (str, as lrkit.diagnose and read_log give them; a glob's matches) read as `lrkit diagnose` reads
// them; RankLogError -> ValueError.
diagnostics::RankLog read_logs(const py::list& logs, const py::object& columns) {
  try {
    diagnostics::ReadOptions read;
    read.columns = columns_from_python(columns);
    std::vector<std::string> inputs;
    for (const auto& log : logs) inputs.push_back(text_from_python(log));
    return diagnostics::read_rank_logs(diagnostics::rank_log_paths(inputs), read);
  } catch (const diagnostics::RankLogError& e) {
    raise_with_text(PyExc_ValueError, e.what());
  }
}

py::list warnings_of(const diagnostics::RankLog& log) {
  py::list warnings;
  for (const auto& warning : log.warnings) warnings.append(text_to_python(warning));
  return warnings;
}

// A series as a NumPy array: [steps] or, with `ranks`, [steps, ranks]; None where the log has none.
py::object as_array(const std::vector<double>& values, size_t steps, int64_t ranks = 0) {
  if (values.empty()) return py::none();
  std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(steps)};
  if (ranks > 0) shape.push_back(static_cast<py::ssize_t>(ranks));
  return py::array_t<double>(shape, values.data());
}

// The per-step dispersion of the logged per-rank scalars, as lrkit train logs it under /diagnostics
// (step_dispersion: population std, std / |mean|, range, the rank furthest from the mean loss).
py::dict dispersion_of(const diagnostics::RankLog& log) {
  const size_t n = static_cast<size_t>(log.ranks);
  std::vector<double> loss_std, loss_cv, loss_range, grad_norm_std, grad_norm_cv;
  std::vector<int64_t> outlier;
  for (size_t t = 0; t < log.size(); ++t) {
    const auto row = [&](const std::vector<double>& m) { return std::vector<double>(&m[t * n], &m[t * n] + n); };
    diagnostics::RankScalars scalars;
    scalars.loss = row(log.loss);
    // A log of the loss alone: its gradient norms' dispersion is NaN, and left out below.
    scalars.grad_norm = log.grad_norm.empty() ? std::vector<double>(n, std::nan("")) : row(log.grad_norm);
    const auto d = diagnostics::step_dispersion(scalars);
    loss_std.push_back(d.loss_std);
    loss_cv.push_back(d.loss_cv);
    loss_range.push_back(d.loss_range);
    outlier.push_back(d.loss_outlier_rank);
    grad_norm_std.push_back(d.grad_norm_std);
    grad_norm_cv.push_back(d.grad_norm_cv);
  }
  py::dict out;
  out["loss_std"] = as_array(loss_std, log.size());
  out["loss_cv"] = as_array(loss_cv, log.size());
  out["loss_range"] = as_array(loss_range, log.size());
  out["loss_outlier_rank"] = py::array_t<int64_t>(static_cast<py::ssize_t>(outlier.size()), outlier.data());
  if (!log.grad_norm.empty()) {
    out["grad_norm_std"] = as_array(grad_norm_std, log.size());
    out["grad_norm_cv"] = as_array(grad_norm_cv, log.size());
  }
  return out;
}

}  // namespace

void bind_diagnose(py::module_& m) {
  m.def(
      "_diagnose",
      [](const py::list& logs, const py::object& columns, std::optional<int64_t> window,
         std::optional<double> jump_z, std::optional<double> shift_z, std::optional<double> spike_z,
         std::optional<double> grad_spike_z, std::optional<double> outlier_z, std::optional<int64_t> skip) {
        diagnostics::ReportOptions options;  // its defaults stand where Python gave None
        options.window = window;
        options.skip = skip;
        if (jump_z) options.jump_z = *jump_z;
        if (shift_z) options.shift_z = *shift_z;
        if (spike_z) options.spike_z = *spike_z;
        if (grad_spike_z) options.grad_spike_z = *grad_spike_z;
        if (outlier_z) options.outlier_z = *outlier_z;
        const auto log = read_logs(logs, columns);
        try {
          const auto report = diagnostics::analyze(log, options);
          // Paths in the report come back as the str that named them.
          return py::make_tuple(text_to_python(diagnostics::format_json(report)),
                                text_to_python(diagnostics::format_text(report)), warnings_of(log));
        } catch (const diagnostics::RankLogError& e) {  // an option out of range ("option --jump-z must be ...")
          raise_with_text(PyExc_ValueError, e.what());
        }
      },
      py::arg("logs"), py::arg("columns"), py::arg("window"), py::arg("jump_z"), py::arg("shift_z"), py::arg("spike_z"),
      py::arg("grad_spike_z"), py::arg("outlier_z"), py::arg("skip"),
      "(the report as JSON, as text, the reader's warnings); lrkit.diagnose wraps it");
  m.def(
      "_read_rank_logs",
      [](const py::list& logs, const py::object& columns) {
        const auto log = read_logs(logs, columns);
        const size_t steps = log.size();
        std::vector<int64_t> step(log.steps.begin(), log.steps.end());  // whole numbers: the reader checks them
        py::dict out;
        out["source"] = text_to_python(log.source);
        out["step"] = py::array_t<int64_t>(static_cast<py::ssize_t>(steps), step.data());
        out["loss"] = as_array(log.loss, steps, log.ranks);
        out["grad_norm"] = as_array(log.grad_norm, steps, log.ranks);
        out["cos_to_mean"] = as_array(log.cos_to_mean, steps, log.ranks);
        out["dispersion"] = dispersion_of(log);
        out["warnings"] = warnings_of(log);
        return out;
      },
      py::arg("logs"), py::arg("columns"),
      "a per-rank log as lrkit diagnose reads it, as arrays; lrkit.read_log wraps it");
}

}  // namespace lrkit::python
