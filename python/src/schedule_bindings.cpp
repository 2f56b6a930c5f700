// Schedule, families(), decay_branches() and SpecError (a ValueError carrying
// the position, token and rule) for Python. Values are the C++ schedule's, bit for bit.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>
#include <stdexcept>

#include "bindings.hpp"
#include "lrkit/common/message_text.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/refine.hpp"
#include "lrkit/schedules/schedule.hpp"
#include "lrkit/schedules/series_file.hpp"
#include "lrkit/schedules/series_fit.hpp"
#include "lrkit/schedules/series_match.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/spec_error.hpp"
#include "lrkit/schedules/summary.hpp"
#include "lrkit/schedules/usable_rates.hpp"

namespace py = pybind11;

namespace lrkit::python {

namespace {

using schedules::Schedule;

py::dict phase_dict(const schedules::Phase& p) {
  py::dict d;
  d["begin"] = p.begin;
  d["end"] = p.end;
  d["kind"] = schedules::phase_kind_name(p.kind);
  d["jumps_at_begin"] = p.jumps_at_begin;
  return d;
}

py::list phase_list(const std::vector<schedules::Phase>& phases) {
  py::list out;
  for (const auto& p : phases) out.append(phase_dict(p));
  return out;
}

// A step or a step count from Python: an int (or numpy's, through __index__), or a float that is exactly whole,
// as PyTorch's own schedulers take total_steps=1e4; anything else raises naming `what`.
int64_t whole_number(const py::handle& value, const std::string& what) {
  // bool is an int to Python (numpy's has __index__ too), and True a count of 1: a flag where a step count belongs.
  const std::string type_name = Py_TYPE(value.ptr())->tp_name;
  if (PyBool_Check(value.ptr()) || type_name == "numpy.bool_" || type_name == "numpy.bool")
    throw py::type_error(what + " must be a whole number (got bool)");
  if (PyIndex_Check(value.ptr())) {
    const auto index = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
    if (!index) throw py::error_already_set();
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
    if (overflow != 0 || v > kLargestWholeNumber || v < -kLargestWholeNumber)
      throw py::value_error(what + " is out of range (got " + std::string(py::str(index)) + ")");
    return v;
  }
  if (PyFloat_Check(value.ptr())) {
    const double v = value.cast<double>();
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) <= static_cast<double>(kLargestWholeNumber))
      return static_cast<int64_t>(v);
    throw py::value_error(what + " must be a whole number (got " + lrkit::format_number(v) + ")");
  }
  throw py::type_error(what + " must be a whole number (got " + std::string(py::str(py::type::of(value).attr("__name__"))) + ")");
}

std::optional<int64_t> whole_number_or_none(const py::handle& value, const std::string& what) {
  return value.is_none() ? std::nullopt : std::optional<int64_t>(whole_number(value, what));
}

std::optional<int64_t> total_or_none(const Schedule& s) { return s.bounded() ? std::optional<int64_t>(s.total()) : std::nullopt; }

// Every element a whole step >= 0 (floats like 3.0 are accepted; 3.5 is not).
py::array_t<double> values(const Schedule& s, const py::object& steps) {
  const auto as_double = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(steps);
  if (!as_double) throw py::type_error("Schedule.values: steps must be an array of numbers");
  py::array_t<double> out(as_double.request().shape);
  const double* in = as_double.data();
  double* result = out.mutable_data();
  const auto n = as_double.size();
  for (py::ssize_t i = 0; i < n; ++i) {
    const double step = in[i];
    if (!(step >= 0) || step != std::floor(step) || step > static_cast<double>(kLargestWholeNumber))
      throw py::value_error("Schedule.values: element " + std::to_string(i) + " is " + lrkit::format_number(step) +
                            "; steps must be whole numbers >= 0");
    result[i] = s(static_cast<int64_t>(step));
  }
  return out;
}

py::dict summary(const Schedule& s, const py::object& steps_given) {
  const auto steps = whole_number_or_none(steps_given, "Schedule.summary: steps");
  if (!steps && !s.bounded()) throw py::value_error("Schedule.summary: this schedule has no end; give steps=N");
  if (steps && *steps < 1) throw py::value_error("Schedule.summary: steps must be >= 1 (got " + std::to_string(*steps) + ")");
  const auto sm = schedules::summarize(s, steps.value_or(s.total()));
  py::dict d;
  d["steps"] = sm.steps;
  d["peak"] = sm.peak;
  d["peak_step"] = sm.peak_step;
  d["warmup_end"] = sm.warmup_end;
  d["decay_start"] = sm.decay_start ? py::object(py::int_(*sm.decay_start)) : py::object(py::none());
  d["final_value"] = sm.final_value;
  d["checkpoints"] = sm.checkpoints;
  d["phases"] = phase_list(sm.phases);
  return d;
}

py::object cycled_momentum(const Schedule& s, const py::object& step, double base, double max) {
  if (!schedules::is_momentum_range(base, max))
    throw py::value_error("Schedule.cycled_momentum: the momentum must go from base to max with 0 <= base <= max < 1 "
                          "(got base " + format_number(base) + ", max " + format_number(max) + ")");
  const auto momentum = s.cycled_momentum(whole_number(step, "step"), base, max);
  return momentum ? py::object(py::float_(*momentum)) : py::object(py::none());
}

// A 1-d sequence of numbers as doubles; `who` and `what` name it in the TypeError for anything else.
std::vector<double> number_vector(const py::object& given, const std::string& who, const char* what) {
  const auto array = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(given);
  if (!array || array.ndim() != 1) throw py::type_error(who + ": " + what + " must be a 1-d sequence of numbers");
  return std::vector<double>(array.data(), array.data() + array.size());
}

py::dict row_dict(const schedules::SeriesRow& r) {
  return py::dict(py::arg("step") = r.step, py::arg("logged") = r.logged, py::arg("schedule") = r.scheduled,
                  py::arg("relative") = r.relative);
}

// The logged rates against the schedule (schedules::match_series, which also checks the rows and the tolerance): a
// dict of the verdict, its rows and the loop mistake that explains a difference.
py::dict compare(const Schedule& s, const py::object& steps_given, const py::object& rates_given, double tolerance) {
  const std::vector<double> steps = number_vector(steps_given, "Schedule.compare", "steps"),
                            rates = number_vector(rates_given, "Schedule.compare", "rates");
  schedules::SeriesMatch m;
  try {
    m = schedules::match_series(s, steps, rates, tolerance);
  } catch (const std::invalid_argument& e) {
    throw py::value_error("Schedule.compare: " + std::string(e.what()));
  }
  py::dict d;
  d["follows"] = m.follows;
  d["rows"] = m.compared;
  d["worst"] = row_dict(m.worst_detail);
  d["first_difference"] = m.follows ? py::object(py::none()) : py::object(row_dict(m.first_off_detail));
  d["mistake"] = schedules::mistake_name(m.mistake);
  d["amount"] = m.amount;
  d["restarts"] = m.restarts;
  const auto int_or_none = [](int64_t n) { return n == 0 ? py::object(py::none()) : py::object(py::int_(n)); };
  d["other_length"] = int_or_none(m.other_length);
  d["other_length_last"] = int_or_none(m.other_length_last);
  d["left_end_value_at"] = int_or_none(m.left_end_value_at);
  const schedules::LengthChange& c = m.length_change;
  d["length_change"] = m.mistake != schedules::SeriesMistake::LengthChanged
                           ? py::object(py::none())
                           : py::dict(py::arg("before") = c.before, py::arg("after") = c.after,
                                      py::arg("last_step_before") = c.last_step_before,
                                      py::arg("first_step_after") = c.first_step_after);
  const schedules::OtherSettingFound& setting = m.setting;
  d["setting"] = m.mistake != schedules::SeriesMistake::OtherSetting
                     ? py::object(py::none())
                     : py::dict(py::arg("name") = setting.name,
                                py::arg("given") = setting.given.empty() ? py::object(py::none())
                                                                         : py::object(py::str(setting.given)),
                                py::arg("value") = setting.value, py::arg("spec") = setting.spec,
                                py::arg("lowest") = setting.lowest, py::arg("highest") = setting.highest,
                                py::arg("highest_is_last") = setting.highest_is_last);
  const std::string why = schedules::explain(m);
  d["explanation"] = why.empty() ? py::object(py::none()) : py::object(py::str(why));
  return d;
}

// The spec the logged rates follow (schedules::fit_checked_series), as `lrkit schedule --fit` finds it.
py::dict fit_schedule(const py::object& steps_given, const py::object& rates_given, const py::object& total_given,
                      double tolerance) {
  const std::vector<double> steps = number_vector(steps_given, "fit_schedule", "steps"),
                            rates = number_vector(rates_given, "fit_schedule", "rates");
  const auto total = whole_number_or_none(total_given, "fit_schedule: total");
  schedules::SeriesFit fit;
  try {
    fit = schedules::fit_checked_series(schedules::series_steps(steps, rates), rates, total, tolerance);
  } catch (const std::invalid_argument& e) {
    throw py::value_error("fit_schedule: " + std::string(e.what()));
  }
  if (fit.spec.empty()) throw py::value_error("fit_schedule: no rate >= 0 to fit a schedule to");
  return py::dict(py::arg("fits") = fit.fits, py::arg("spec") = fit.spec, py::arg("total") = fit.total,
                  py::arg("worst") = row_dict(fit.match.worst_detail),
                  py::arg("first_difference") =
                      fit.match.follows ? py::object(py::none()) : py::object(row_dict(fit.match.first_off_detail)));
}

// A series from a file as table(...), refined(...) and `lrkit schedule --compare` read it: a run log, a CSV or TSV,
// a JSON log (a Hugging Face trainer_state.json, JSON lines) or TensorBoard event files.
py::dict read_series(const py::object& path_given, const std::string& column, const std::string& steps) {
  const py::object path = py::module_::import("os").attr("fspath")(path_given);
  if (!py::isinstance<py::str>(path)) throw py::type_error("read_series: path must be a str or an os.PathLike of one");
  schedules::Series series;
  try {
    series = schedules::read_series_file(text_from_python(path), column, steps, schedules::RepeatedSteps::Replace);
  } catch (const schedules::SeriesFileError& e) {
    raise_with_text(PyExc_ValueError, "read_series: " + std::string(e.what()));  // it names the file, maybe not UTF-8
  }
  const auto array = [](const std::vector<double>& v) {
    return py::array_t<double>(static_cast<py::ssize_t>(v.size()), v.data());
  };
  py::dict d;
  d["steps"] = array(series.steps);
  d["values"] = array(series.values);
  d["replaced"] = series.replaced;
  d["run_steps"] = series.run_steps > 0 ? py::object(py::int_(series.run_steps)) : py::object(py::none());
  d["last_line_cut"] = series.last_line_cut;
  d["source"] = series.source.empty() ? py::object(py::none()) : py::object(py::str(series.source));
  return d;
}

void check_rates(const Schedule& s, const py::object& steps_given) {
  const auto steps = whole_number_or_none(steps_given, "Schedule.check_rates: steps");
  if (!steps && !s.bounded()) throw py::value_error("Schedule.check_rates: this schedule has no end; give steps=N");
  schedules::require_usable_rates(s, steps.value_or(s.total()));
}

}  // namespace

void bind_schedules(py::module_& m) {
  static py::exception<schedules::SpecError> spec_error(m, "SpecError", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const schedules::SpecError& e) {
      // An instance, to carry attributes; a file name in the spec comes back as the str that named it.
      py::object error = py::reinterpret_borrow<py::object>(spec_error)(text_to_python(e.what()));
      // The index into the str the spec was given as, the message's position: characters, not bytes.
      error.attr("position") = characters_before(e.spec(), e.position());
      error.attr("token") = text_to_python(e.token());
      error.attr("rule") = text_to_python(e.rule());
      PyErr_SetObject(spec_error.ptr(), error.ptr());
    }
  });

  py::class_<Schedule>(m, "Schedule",
                       "An immutable learning-rate schedule built from a spec string, a pure function of the step.\n"
                       "Schedule('wsd(peak=3e-4, warmup=2%, decay=20%)', total_steps=10000)\n"
                       "Steps and total_steps are whole numbers: ints, or floats like 1e4 that are exactly whole.")
      .def(py::init([](const py::object& spec_given, const py::object& total_steps_given) {
             // pybind11 would answer another type with the constructor's C++ signature.
             if (!py::isinstance<py::str>(spec_given))
               throw py::type_error("Schedule: spec must be a string such as 'cosine(peak=1e-3)' (got " +
                                    std::string(py::str(py::type::of(spec_given).attr("__name__"))) + ")");
             const auto spec = text_from_python(spec_given);
             const auto total_steps = whole_number_or_none(total_steps_given, "total_steps");
             if (total_steps && *total_steps < 1)
               throw py::value_error("total_steps must be >= 1 (got " + std::to_string(*total_steps) + ")");
             return schedules::parse_schedule(spec, total_steps);
           }),
           py::arg("spec"), py::arg("total_steps") = py::none())
      .def("__call__", [](const Schedule& s, const py::object& step) { return s(whole_number(step, "step")); }, py::arg("step"),
           "the learning rate of update `step` (0-based, a whole number); past the end, the end value")
      .def("values", &values, py::arg("steps"), "the rates of an array of steps, as a float64 array of the same shape")
      .def("at", &Schedule::at, py::arg("t"), "the value in continuous time t")
      .def_property_readonly("spec", [](const Schedule& s) { return text_to_python(s.to_spec()); },
                             "the canonical spec; Schedule(spec, total_steps) rebuilds it")
      .def_property_readonly("total_steps", &total_or_none, "T, or None for a schedule without an end")
      .def_property_readonly("phases", [](const Schedule& s) { return phase_list(s.phases()); })
      .def_property_readonly("checkpoints", &Schedule::checkpoints, "steps where a budgeted run keeps a decayed checkpoint (WSD-S)")
      .def("cycled_momentum", &cycled_momentum, py::arg("step"), py::arg("base"), py::arg("max"),
           "the momentum (SGD's, or Adam's beta1) of update `step` where the schedule cycles it against the rate as "
           "PyTorch's OneCycleLR and CyclicLR do with cycle_momentum (onecycle and triangular): max where the rate is "
           "lowest, base at its peak; None for a schedule that cycles none")
      .def("check_rates", &check_rates, py::arg("steps") = py::none(),
           "raises SpecError naming the first of steps 0..steps (default: total_steps) whose rate no optimizer can "
           "apply: NaN, infinite, negative or above float32's largest; lrkit's schedulers call it when they start")
      .def("compare", &compare, py::arg("steps"), py::arg("rates"), py::arg("tolerance") = 1e-6,
           "whether the rates a loop logged at `steps` follow this schedule (each within `tolerance`, relative), and "
           "where not, the loop mistake that explains every row: a dict of follows, rows, worst and "
           "first_difference (step, logged, schedule, relative), mistake (read_ahead, restarted, faster, slower, "
           "other_length, length_changed, scaled, other_setting or none), amount, restarts, other_length and "
           "other_length_last (the span of lengths the rows fit), left_end_value_at, length_change (before, after, "
           "last_step_before, first_step_after), setting (name, given, value, spec, lowest, highest, "
           "highest_is_last) and explanation")
      .def("summary", &summary, py::arg("steps") = py::none(),
           "peak, warmup end, decay start, final value, checkpoints and phases over `steps` (default: total_steps)")
      // Pickled as (canonical spec, total_steps), the pair that rebuilds it bit for bit, so a Schedule and the
      // schedulers that hold one survive copy.deepcopy, torch.save of whole objects and multiprocessing.
      // A refined(norms=FILE) schedule reads FILE again when unpickled.
      .def(py::pickle([](const Schedule& s) { return py::make_tuple(text_to_python(s.to_spec()), total_or_none(s)); },
                      [](const py::tuple& state) {
                        if (state.size() != 2)
                          throw py::value_error("Schedule: a pickled state is (spec, total_steps); got " +
                                                std::to_string(state.size()) + " items");
                        if (!py::isinstance<py::str>(state[0]))
                          throw py::type_error("Schedule: a pickled state's spec is a string (got " +
                                               std::string(py::str(py::type::of(state[0]).attr("__name__"))) + ")");
                        return schedules::parse_schedule(text_from_python(state[0]),
                                                         state[1].cast<std::optional<int64_t>>());
                      }))
      .def("__copy__", [](const py::object& self) { return self; })  // immutable: a copy is the same schedule
      .def("__deepcopy__", [](const py::object& self, const py::dict&) { return self; }, py::arg("memo"))
      .def("__repr__", [](const Schedule& s) {
        return text_to_python("Schedule('" + s.to_spec() + "'" +
                              (s.bounded() ? ", total_steps=" + std::to_string(s.total()) : "") + ")");
      });

  py::class_<schedules::DecayBranch>(m, "DecayBranch", "one budget of a sweep with decay branches (decay_branches)")
      .def_readonly("budget", &schedules::DecayBranch::budget)
      .def_readonly("fork", &schedules::DecayBranch::fork,
                    "the main run's updates it continues from (0: none, it trains from scratch); it runs fork..budget-1")
      .def_readonly("schedule", &schedules::DecayBranch::schedule, "the schedule of `budget` steps, the separate run's")
      .def("__repr__", [](const schedules::DecayBranch& b) {
        return "DecayBranch(budget=" + std::to_string(b.budget) + ", fork=" + std::to_string(b.fork) + ")";
      });
  py::class_<schedules::DecayBranches>(m, "DecayBranches", "the plan of a budget sweep with decay branches (decay_branches)")
      .def_readonly("main", &schedules::DecayBranches::main, "the main run's schedule: the spec stretched 1000x past the largest budget, to 1e8 steps at most")
      .def_readonly("branches", &schedules::DecayBranches::branches, "one per budget, in the budgets' order")
      .def_property_readonly("main_steps", &schedules::DecayBranches::main_steps, "the updates the main run trains: the latest fork")
      .def_property_readonly("forks", &schedules::DecayBranches::forks,
                             "the main run's updates after which a branch continues, ascending: where the main run saves its state")
      .def_property_readonly("steps", &schedules::DecayBranches::steps,
                             "the updates the sweep trains, main run and branches, against sum(budgets) for separate runs")
      .def("__repr__", [](const schedules::DecayBranches& plan) {
        std::string text = "DecayBranches(main='" + plan.main.to_spec() + "', branches=[";
        for (size_t i = 0; i < plan.branches.size(); ++i)
          text += (i ? ", " : "") + std::to_string(plan.branches[i].budget) + "@" + std::to_string(plan.branches[i].fork);
        return text_to_python(text + "], steps=" + std::to_string(plan.steps()) + ")");
      });
  m.def("decay_branches",
        [](const py::object& spec, const py::object& budgets_given) {
          if (!py::isinstance<py::str>(spec))
            throw py::type_error("decay_branches: spec must be a string such as 'wsd(peak=1e-3, decay=20%)' (got " +
                                 std::string(py::str(py::type::of(spec).attr("__name__"))) + ")");
          if (!py::isinstance<py::iterable>(budgets_given) || py::isinstance<py::str>(budgets_given))
            throw py::type_error("budgets must be a sequence of step counts, e.g. [500, 1000, 2000] (got " +
                                 std::string(py::repr(budgets_given)) + ")");
          std::vector<int64_t> budgets;
          for (const auto& budget : budgets_given) budgets.push_back(whole_number(budget, "budget"));
          return schedules::decay_branches(text_from_python(spec), budgets);
        },
        py::arg("spec"), py::arg("budgets"),
        "The plan of a budget sweep with decay branches (WSD): one main run under `spec` stretched past every budget,\n"
        "saved after each of `forks` updates, and per budget a branch that continues the main run's state after\n"
        "`fork` updates under the schedule of `budget` steps: the separate run of that budget, bit for bit, at the\n"
        "cost of its decay. `spec` has no total= (each branch's length is its budget).");

  m.def("families", [] {
    py::list out;
    for (const auto& f : schedules::schedule_families()) {
      py::dict d;
      d["name"] = f.name;
      d["keys"] = f.keys;
      d["takes_schedules"] = f.takes_schedules;
      d["description"] = f.description;
      out.append(d);
    }
    return out;
  }, "every schedule family of the spec grammar: name, keys (positional order), description");

  m.def("spec_word",
        [](const py::object& text) {
          if (!py::isinstance<py::str>(text))
            throw py::type_error("spec_word: text must be a string (got " +
                                 std::string(py::str(py::type::of(text).attr("__name__"))) + ")");
          return text_to_python(schedules::format_word(text_from_python(text)));
        },
        py::arg("text"),
        "text as a spec value: itself where it reads back as one word, else a quoted string "
        "(f'table(file={lrkit.spec_word(path)})' for a path with spaces, commas or brackets)");

  m.def("fit_schedule", &fit_schedule, py::arg("steps"), py::arg("rates"), py::arg("total") = py::none(),
        py::arg("tolerance") = 1e-6,
        "the spec the rates a loop logged at `steps` follow, as `lrkit schedule --fit` finds it: constant, cosine, "
        "linear, wsd, polynomial, invsqrt, exponential, uba, onecycle, step, multistep, restarts or triangular, "
        "from what the log's shape shows (its peak, warmup, drops, climbs, a floor it ends at) and one number or the "
        "run's length (default: the last step + 1, or the last step) that the rows pin. A dict of fits, "
        "spec, total, worst and first_difference (step, logged, schedule, relative); where no family fits, the "
        "closest tried with fits False");
  m.def("read_series", &read_series, py::arg("path"), py::arg("column") = "/train/lr",
        py::arg("steps") = "/train/step",
        "a series as lrkit's table(...), refined(...) and `lrkit schedule --compare` read it: a dict of steps and "
        "values (float64 arrays), replaced, run_steps, last_line_cut and source. path: a run directory or its log.h5 "
        "(column and steps are datasets), a CSV or TSV (columns by name: the dataset path whole, else its last name; a row "
        "whose cell is empty logs other metrics), a Hugging Face trainer_state.json (its log_history; an output or "
        "checkpoint directory stands for its own or its newest checkpoint's; run_steps is its max_steps, else None), "
        "JSON lines or an array of records, a Weights & Biases run's directory or its .wandb file (the history rows at "
        "the step metric wandb.define_metric gave the column, else _step; run_steps is its config's max_steps), an "
        "MLflow run (column names the metric) or a metric's file, an MLflow store (mlflow.db: its one run that logs "
        "the column; mlflow.db/RUN, RUN its name or ID, where several do), or "
        "TensorBoard event files, one or a run's directory (column is the tag, without its leading '/': "
        "train/learning_rate); rows a resumed run logged again replace the earlier ones, as TensorBoard shows them, "
        "and replaced counts those; last_line_cut: a table's, a JSON-lines or an MLflow log's last line, cut off by "
        "a kill, was left out; source: the file read where a directory stood for one (a checkpoint's, a metric's; "
        "a W&B run's sessions, joined by ', '), else None. "
        "Raises ValueError naming the file");
  m.def("refine_multipliers",
        [](const std::vector<double>& norms, const py::object& total_steps_given, const std::string& norm, double tau) {
          const int64_t total_steps = whole_number(total_steps_given, "total_steps");
          if (norm != "l1" && norm != "l2") throw py::value_error("norm must be 'l1' or 'l2' (got '" + norm + "')");
          return schedules::refine_from_norms(norms, total_steps, norm == "l1" ? schedules::NormKind::L1 : schedules::NormKind::L2,
                                              tau);
        },
        py::arg("norms"), py::arg("total_steps"), py::arg("norm") = "l1", py::arg("tau") = 0.1,
        "Defazio et al.'s refined multipliers for updates 0..T (T + 1 values, max 1, last 0)");
}

}  // namespace lrkit::python
