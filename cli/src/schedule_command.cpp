// `lrkit schedule SPEC`: the schedule library from the command line.
#include <boost/program_options.hpp>
#include <iostream>
#include <optional>

#include "command.hpp"
#include "schedule_compare.hpp"
#include "schedule_output.hpp"
#include "lrkit/common/numbers.hpp"
#include "lrkit/schedules/decay_branches.hpp"
#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/spec.hpp"
#include "lrkit/schedules/summary.hpp"
#include "lrkit/schedules/usable_rates.hpp"
#include "lrkit/options/whole_number_option.hpp"

namespace po = boost::program_options;

namespace lrkit::cli {

namespace {

constexpr const char* kIntro =
    "usage: lrkit schedule SPEC [--steps N] [options]\n"
    "       lrkit schedule --fit FILE [--column C] [--steps N]\n"
    "\n"
    "Prints the learning rate of every update 0..N of the schedule SPEC (the row at N\n"
    "is the end value). SPEC examples:\n"
    "  'wsd(peak=3e-4, warmup=2%, decay=20%, shape=1-sqrt)'\n"
    "  'uba(peak=1e-3, phi=1.5, warmup=200)'\n"
    "  'wsds(peak=1e-3, budgets=[12500, 25000, 50000], decay=10%)'\n"
    "  'join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])'\n"
    "Lengths are steps (200) or percent of the run (2%); a floor given in percent is\n"
    "a fraction of the peak. --list shows every family and its keys.\n"
    "\n"
    "--branches B1,B2,... plans a budget sweep with decay branches (WSD) instead: one\n"
    "main run under SPEC stretched past every budget, and per budget a branch that\n"
    "continues the main run's state after `from` updates and decays to its budget,\n"
    "bit for bit the separate run of that budget. Each row: the updates a run trains\n"
    "(from..to-1). SPEC has no total= (a branch's length is its budget).\n"
    "\n"
    "--compare FILE checks the rates a run logged (a run directory, its log.h5, a\n"
    "CSV/TSV with step and lr columns, TensorBoard event files, a Hugging Face\n"
    "Trainer's trainer_state.json or output directory, a W&B run directory or\n"
    "run-ID.wandb file, an MLflow run or store (mlflow.db, mlflow.db/RUN), JSON\n"
    "lines: --column names the tag, e.g. train/learning_rate) against SPEC instead,\n"
    "over --steps, else the length the log records (a Trainer's max_steps). Where they\n"
    "differ, it names the loop mistake that explains it: a scheduler stepped\n"
    "before the optimizer, rebuilt at a resume, stepped per micro-batch, given\n"
    "another run length (from the start, or at a resume), another peak, or another\n"
    "value of one number of SPEC (its warmup, its floor). Exit 0: the log follows\n"
    "SPEC; 1: it does not.\n"
    "\n"
    "--fit FILE finds the spec such a log follows, without SPEC: constant, cosine,\n"
    "linear, wsd, polynomial, invsqrt, exponential, uba, onecycle, step, multistep,\n"
    "restarts or triangular, from what the log shows (its peak, warmup, drops,\n"
    "climbs, a floor it ends at), with one more number or the length the rows pin.\n"
    "Exit 0: one fits (printed with its length); 1: none does (the closest is\n"
    "printed).\n";

void print_families(std::ostream& out) {
  for (const auto& f : schedules::schedule_families()) {
    out << f.name << "(";
    bool first = true;
    if (f.takes_schedules) {
      out << "SCHEDULE" << (f.name == "join" ? ", SCHEDULE, ..." : "");
      first = false;
    }
    for (const auto& k : f.keys) {
      out << (first ? "" : ", ") << k;
      first = false;
    }
    out << ")\n    " << f.description << "\n";
  }
}

TableFormat parse_format(const std::string& name) {
  if (name == "csv") return TableFormat::Csv;
  if (name == "tsv") return TableFormat::Tsv;
  if (name == "json") return TableFormat::Json;
  throw UsageError("--format must be csv, tsv or json (got '" + name + "')");
}

// `--branches B1,B2,...`: the plan of a sweep with decay branches; every budget is the length of a run, so the
// options about one schedule's length or rendering do not apply.
int print_branches(const std::string& spec, const std::string& list, const po::variables_map& vm) {
  for (const char* alone : {"steps", "every", "at", "summary", "plot", "width", "height", "out", "momentum"})
    if (vm.count(alone) && !vm[alone].defaulted()) throw UsageError(std::string("--branches plans runs of every budget's length: drop --") + alone);
  std::vector<int64_t> budgets;
  for (const auto& item : split_list(list)) {
    const auto budget = parse_integer(item);
    if (!budget) throw UsageError("--branches entry '" + item + "' is not a whole number of steps");
    budgets.push_back(*budget);
  }
  try {
    write_branches(std::cout, schedules::decay_branches(spec, budgets), parse_format(vm["format"].as<std::string>()));
  } catch (const schedules::SpecError& e) {
    throw UsageError(e.what());
  } catch (const std::invalid_argument& e) {
    throw UsageError("--branches: " + std::string(e.what()));
  }
  return kExitOk;
}

}  // namespace

// `--momentum BASE,MAX`, for the printed table only (the other outputs are the rate's).
std::optional<MomentumRange> momentum_range(const po::variables_map& vm, const schedules::Schedule& schedule) {
  if (!vm.count("momentum")) return std::nullopt;
  for (const char* other : {"at", "summary", "plot", "out"})
    if (vm.count(other))
      throw UsageError(std::string("--momentum adds a column to the printed table: drop --") + other);
  const std::string text = vm["momentum"].as<std::string>();
  const auto items = split_list(text);
  std::optional<double> base, max;
  if (items.size() == 2) base = parse_number(items[0]), max = parse_number(items[1]);
  if (!base || !max || !schedules::is_momentum_range(*base, *max))
    throw UsageError("--momentum takes BASE,MAX with 0 <= BASE <= MAX < 1, such as 0.85,0.95 (got '" + text + "')");
  if (!schedule.cycled_momentum(0, *base, *max))
    throw UsageError("--momentum: '" + schedule.to_spec() + "' cycles no momentum; onecycle and triangular do (with at "
                     "most a warmup in front)");
  return MomentumRange{*base, *max};
}

int run_schedule_command(const std::vector<std::string>& args) {
  std::optional<int64_t> steps, at;
  int64_t every = 1, width = 72, height = 16;
  po::options_description options("options");
  options.add_options()
      ("help,h", "show this help")
      ("list", "list every schedule family and its keys")
      ("steps,n", options::whole_number(&steps), "total number of updates T (default: the schedule's own, e.g. wsds)")
      ("format,f", po::value<std::string>()->default_value("csv"), "table format: csv, tsv or json")
      ("every", options::whole_number(&every), "print every K-th step (the last step is always printed)")
      ("at", options::whole_number(&at), "print the learning rate at one step")
      ("summary", "print peak, warmup end, decay start, final value, checkpoints and phases")
      ("plot", "draw the curve in the terminal")
      ("width", options::whole_number(&width), "plot width in characters")
      ("height", options::whole_number(&height), "plot height in lines")
      ("out,o", po::value<std::string>(), "also write the full table to this file: .h5 (HDF5), .csv or .tsv")
      ("branches", po::value<std::string>(), "plan a sweep with decay branches at these budgets (e.g. 500,1000,2000)")
      ("momentum", po::value<std::string>(), "BASE,MAX: add the momentum column that onecycle and triangular cycle "
       "against the rate (PyTorch's cycle_momentum; e.g. 0.85,0.95)")
      ("compare", po::value<std::string>(), "check the rates a run logged in this file against SPEC")
      ("fit", po::value<std::string>(), "find the spec the rates a run logged in this file follow (no SPEC)")
      ("column", po::value<std::string>()->default_value("/train/lr"),
       "--compare, --fit: the rates' dataset or column")
      ("tolerance", po::value<double>()->default_value(1e-6, "1e-6"),
       "--compare, --fit: the relative difference allowed");
  std::string spec;
  const auto vm = parse_with_positional(args, options, spec, "schedule");
  if (vm.count("help")) {
    std::cout << kIntro << "\n" << options;
    return kExitOk;
  }
  if (vm.count("list")) {
    print_families(std::cout);
    return kExitOk;
  }
  if (vm.count("fit") && !spec.empty())
    throw UsageError("--fit finds the spec itself: drop SPEC '" + spec + "' (--compare checks a log against one)");
  for (const char* other : {"compare", "branches"})
    if (vm.count("fit") && vm.count(other))
      throw UsageError(std::string("--fit prints its verdict alone: drop --") + other);
  if (spec.empty() && !vm.count("fit"))
    throw UsageError("missing SPEC, e.g. lrkit schedule 'cosine(peak=1e-3)' --steps 1000");

  if (vm.count("branches")) return print_branches(spec, vm["branches"].as<std::string>(), vm);
  for (const char* key : {"column", "tolerance"})
    if (!vm[key].defaulted() && !vm.count("compare") && !vm.count("fit"))
      throw UsageError(std::string("--") + key + " goes with --compare or --fit");
  for (const char* verdict : {"compare", "fit"}) {
    if (!vm.count(verdict)) continue;
    for (const char* alone : {"every", "at", "summary", "plot", "out", "momentum"})
      if (vm.count(alone) && !vm[alone].defaulted())
        throw UsageError(std::string("--") + verdict + " prints its verdict alone: drop --" + alone);
    if (steps && *steps < 1) throw UsageError("--steps must be at least 1 (got " + std::to_string(*steps) + ")");
    CompareRequest request;
    request.spec = spec;
    request.file = vm[verdict].as<std::string>();
    request.column = vm["column"].as<std::string>();
    request.steps = steps;
    request.tolerance = vm["tolerance"].as<double>();
    request.format = parse_format(vm["format"].as<std::string>());
    return std::string(verdict) == "fit" ? fit_log(request) : compare_with_log(request);
  }

  if (steps && *steps < 1) throw UsageError("--steps must be at least 1 (got " + std::to_string(*steps) + ")");
  if (every < 1) throw UsageError("--every must be at least 1 (got " + std::to_string(every) + ")");
  if (width < 8 || width > 1000) throw UsageError("--width must be in [8, 1000] (got " + std::to_string(width) + ")");
  if (height < 4 || height > 200) throw UsageError("--height must be in [4, 200] (got " + std::to_string(height) + ")");
  const TableFormat format = parse_format(vm["format"].as<std::string>());
  if (vm.count("out")) check_table_file(vm["out"].as<std::string>());

  schedules::Schedule schedule = [&] {
    try {
      return schedules::parse_schedule(spec, steps);
    } catch (const schedules::SpecError& e) {
      throw UsageError(e.what());
    }
  }();
  if (!steps) {
    if (!schedule.bounded())
      throw UsageError("this schedule has no natural end: give --steps N");
    steps = schedule.total();
  }
  // Every command below evaluates each step (the rate check and the summary do), so --every or --at would not help.
  if (*steps > schedules::kLongestCheckedRun)
    throw UsageError("--steps is at most " + std::to_string(schedules::kLongestCheckedRun) + " (got " + std::to_string(*steps) +
                     "): every step is evaluated, for the rate check and the summary");
  try {
    schedules::require_usable_rates(schedule, *steps);
  } catch (const schedules::SpecError& e) {
    throw UsageError(e.what());
  }
  const auto momentum = momentum_range(vm, schedule);
  const schedules::Summary summary = schedules::summarize(schedule, *steps);
  if (const std::string warning = schedules::peak_warning(summary); !warning.empty())
    std::cerr << "lrkit schedule: warning: " << warning << "\n";

  if (at) {
    if (*at < 0) throw UsageError("--at must be >= 0 (got " + std::to_string(*at) + ")");
    if (*at > *steps)
      throw UsageError("--at " + std::to_string(*at) + " is past the schedule's end: its steps run 0.." + std::to_string(*steps));
    std::cout << schedules::format_number(schedule(*at)) << "\n";
  } else if (vm.count("summary")) {
    write_summary(std::cout, summary, schedule.to_spec(), format == TableFormat::Json);
  } else if (vm.count("plot")) {
    write_plot(std::cout, schedule, *steps, static_cast<int>(width), static_cast<int>(height));
  } else if (!vm.count("out")) {
    write_table(std::cout, schedule, *steps, every, format, momentum);
  }
  if (vm.count("out")) write_table_file(vm["out"].as<std::string>(), schedule, *steps);
  return kExitOk;
}

}  // namespace lrkit::cli
