// `lrkit diagnose` for Python (lrkit.diagnose): the silent-inconsistency report on an lrkit run log, a run
// directory, or per-rank CSV / JSON-lines logs, as the command gives it. A pip-installed lrkit has no command line.
#include <pybind11/stl.h>

#include <optional>

#include "bindings.hpp"
#include "lrkit/common/run_log_file.hpp"
#include "lrkit/diagnostics/rank_log.hpp"
#include "lrkit/diagnostics/report.hpp"

namespace py = pybind11;

namespace lrkit::python {

void bind_diagnose(py::module_& m) {
  m.def(
      "_diagnose",
      [](const py::list& logs, const py::str& columns, std::optional<int64_t> window,
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
        try {
          diagnostics::ReadOptions read;
          if (const std::string given = text_from_python(columns); !given.empty())
            read.columns = diagnostics::parse_column_mapping(given);
          std::vector<std::string> paths;  // os.fspath's: str, or bytes as given
          for (const auto& log : logs)
            paths.push_back(run_log_argument(py::isinstance<py::bytes>(log) ? log.cast<std::string>() : text_from_python(log)));
          const auto log = diagnostics::read_rank_logs(paths, read);
          const auto report = diagnostics::analyze(log, options);
          py::list warnings;
          for (const auto& warning : log.warnings) warnings.append(text_to_python(warning));
          // Paths in the report come back as the str that named them.
          return py::make_tuple(text_to_python(diagnostics::format_json(report)),
                                text_to_python(diagnostics::format_text(report)), warnings);
        } catch (const diagnostics::RankLogError& e) {
          raise_with_text(PyExc_ValueError, e.what());
        }
      },
      py::arg("logs"), py::arg("columns"), py::arg("window"), py::arg("jump_z"), py::arg("shift_z"), py::arg("spike_z"),
      py::arg("grad_spike_z"), py::arg("outlier_z"), py::arg("skip"),
      "(the report as JSON, as text, the reader's warnings); lrkit.diagnose wraps it");
}

}  // namespace lrkit::python
