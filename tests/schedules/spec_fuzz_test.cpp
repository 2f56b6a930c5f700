// Randomized input for the spec parser and builders: random token soup and
// mutations of valid specs must either build a schedule whose values are
// finite or throw SpecError; never crash, hang, or throw anything else.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>

#include "lrkit/schedules/factory.hpp"
#include "test_files.hpp"

namespace lrkit::schedules {
namespace {

const std::vector<std::string> kFragments = {
    "cosine", "wsd", "wsds", "uba", "join", "warmup", "floor", "scale", "onecycle", "restarts", "step", "multistep",
    "exponential", "invsqrt", "infinite", "rewarm", "constant", "linear", "polynomial", "table", "refined", "cyclic",
    "triangular", "triangular2", "exp_range", "up", "down", "mode", "(", ")", "[", "]", ",", "=", "\"", "%", " ",
    "peak", "floor", "warmup", "decay", "shape", "phi", "budgets", "total", "at", "gamma", "every", "milestones",
    "period", "mult", "1-sqrt", "inverse", "exp", "0", "1", "-1", "1e-3", "1e308", "1e-320", "50%", "100%", "250%",
    "0.5", "1e15", "99999999999", "nan", "inf", "true", "\\", "\x01", "\xff", "length", "min", "by", "norms", "file",
    "[]", "rewarm", "const", "cooldown", "anneal", "cycles", "1.75", "warmup_shape", "prefix", "false"};

const std::vector<std::string> kValid = {
    "wsd(peak=3e-4, warmup=2%, decay=20%, shape=1-sqrt, floor=0)",
    "join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])",
    "wsds(peak=1e-3, budgets=[100, 200, 400], decay=10%)",
    "uba(peak=1e-3, phi=1.5, warmup=20)",
    "onecycle(peak=0.1, three_phase=true)",
    "scale(floor(restarts(1, period=7, mult=2), min=0.1), by=2)",
    "cyclic(peak=1e-3, budgets=[100, 200], rewarm=10)",
    "multistep(peak=1, milestones=[10, 20], gamma=0.5)",
    "infinite(peak=1e-3, const=50%, cooldown=10%, anneal=10%)",
    "triangular(peak=0.1, floor=10%, up=7, down=3, mode=exp_range, gamma=0.99)",
    "restarts(peak=1, cycles=3, warmup=5, peak_decay=0.5)",
    "cosine(peak=1, floor=10%, cycles=1.75, warmup=3, warmup_shape=1-sqrt)",
    "warmup(restarts(1, period=7, peak_decay=0.5), length=3, init=0.01, prefix=false)",
};

// `grows`: a growth factor (gamma > 1) is PyTorch's too, and its rate overflows to inf by design; a run refuses
// such rates before it starts (require_usable_rates). Everything else stays finite.
void check_one(const std::string& spec, std::optional<int64_t> total, bool grows = false) {
  try {
    const Schedule s = parse_schedule(spec, total);
    const int64_t end = s.bounded() ? s.total() : 1000;
    for (int64_t t : {int64_t{0}, int64_t{1}, end / 3, end / 2, end}) {
      const double v = s(t);
      ASSERT_TRUE((std::isfinite(v) || (grows && v == INFINITY)) && v >= 0) << spec << " gives " << v << " at step " << t;
    }
    ASSERT_NO_THROW(parse_schedule(s.to_spec(), total)) << spec << " -> " << s.to_spec();
  } catch (const SpecError&) {
    // a clean, positioned error is the expected outcome for most inputs
  }
}

TEST(SpecFuzz, TokenSoupAndMutationsGiveValuesOrSpecErrors) {
  std::mt19937 rng(7);
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  for (int i = 0; i < 30000; ++i) {
    std::string spec;
    if (i % 2 == 0) {
      const size_t n = 1 + pick(24);
      for (size_t k = 0; k < n; ++k) spec += kFragments[pick(kFragments.size())];
    } else {
      spec = kValid[pick(kValid.size())];
      for (size_t k = 0, n = 1 + pick(4); k < n && !spec.empty(); ++k) {
        const size_t at = pick(spec.size());
        switch (pick(3)) {
          case 0: spec.erase(at, 1); break;
          case 1: spec.insert(at, kFragments[pick(kFragments.size())]); break;
          default: spec[at] = static_cast<char>(pick(256)); break;
        }
      }
    }
    const std::optional<int64_t> total = pick(4) == 0 ? std::nullopt : std::optional<int64_t>(1 + pick(5000));
    ASSERT_NO_FATAL_FAILURE(check_one(spec, total));
  }
}

// A valid call of every family, as KEY=VALUE pairs (the combinators' schedules come first, unnamed).
std::map<std::string, std::vector<std::pair<std::string, std::string>>> valid_calls() {
  const std::string table = lrkit::testing::write_text("edge_table.csv", "step,lr\n0,0\n10,1e-3\n100,1e-4\n");
  const std::string norms = lrkit::testing::write_text("edge_norms.csv", "step,grad_norm\n0,2\n1,1.5\n2,1\n3,1.2\n");
  return {
      {"constant", {{"peak", "1e-3"}}},
      {"linear", {{"peak", "1e-3"}, {"floor", "0"}}},
      {"cosine", {{"peak", "1e-3"}, {"warmup", "5"}}},
      {"polynomial", {{"peak", "1e-3"}, {"power", "2"}}},
      {"uba", {{"peak", "1e-3"}, {"phi", "1.5"}}},
      {"rewarm", {{"peak", "1e-3"}, {"warmup", "2%"}}},
      {"wsd", {{"peak", "1e-3"}, {"decay", "20%"}, {"shape", "1-sqrt"}}},
      {"wsds", {{"peak", "1e-3"}, {"budgets", "[100, 200]"}, {"decay", "10%"}}},
      {"infinite", {{"peak", "1e-3"}, {"const", "50%"}, {"cooldown", "10%"}, {"anneal", "10%"}}},
      {"step", {{"peak", "1"}, {"every", "10"}, {"gamma", "0.5"}}},
      {"multistep", {{"peak", "1"}, {"milestones", "[10, 20]"}}},
      {"exponential", {{"peak", "1"}, {"gamma", "0.99"}}},
      {"invsqrt", {{"peak", "1e-3"}, {"warmup", "10"}}},
      {"restarts", {{"peak", "1"}, {"period", "7"}, {"mult", "2"}}},
      {"onecycle", {{"peak", "0.1"}, {"pct_start", "0.3"}}},
      {"cyclic", {{"peak", "1e-3"}, {"budgets", "[100, 200]"}, {"rewarm", "10"}}},
      {"triangular", {{"peak", "0.1"}, {"floor", "0.01"}, {"up", "20"}, {"mode", "exp_range"}}},
      {"refined", {{"norms", "\"" + norms + "\""}, {"peak", "1e-3"}}},
      {"table", {{"file", "\"" + table + "\""}}},
      {"join", {{"", "constant(1e-3)"}, {"", "cosine(1e-3)"}, {"at", "[5]"}}},
      {"warmup", {{"", "cosine(1e-3)"}, {"length", "5"}}},
      {"floor", {{"", "cosine(1e-3)"}, {"min", "1e-4"}}},
      {"scale", {{"", "cosine(1e-3)"}, {"by", "2"}}},
  };
}

std::string call_text(const std::string& family, const std::vector<std::pair<std::string, std::string>>& args) {
  std::string text = family + "(";
  for (size_t i = 0; i < args.size(); ++i)
    text += (i ? ", " : "") + (args[i].first.empty() ? "" : args[i].first + "=") + args[i].second;
  return text + ")";
}

// Every key of every family with values at and past its edges (empty and reversed lists, zero, negative, huge,
// tiny, NaN, percentages, words), the others valid: each call builds or is refused with a SpecError. An empty
// budget list crashed cyclic, which the random mutations above had never produced.
TEST(SpecFuzz, EveryKeyOfEveryFamilyAtItsEdgesGivesValuesOrSpecErrors) {
  const std::vector<std::string> edges = {"[]", "[0]", "[-1]", "[1e308]", "[5, 2]", "[1, 1]", "[1e15]", "0", "-1",
                                          "1", "1e308", "1e-320", "nan", "inf", "0%", "100%", "1000%", "true",
                                          "word", "cosine(1)", "\"\""};
  const auto calls = valid_calls();
  for (const auto& family : schedule_families()) {
    const auto base = calls.find(family.name);
    ASSERT_NE(base, calls.end()) << "valid_calls() has no call of '" << family.name << "': add one";
    ASSERT_NO_THROW(parse_schedule(call_text(family.name, base->second), 300)) << call_text(family.name, base->second);
    for (const std::optional<int64_t> total : {std::optional<int64_t>(), std::optional<int64_t>(1),
                                               std::optional<int64_t>(300)}) {
      for (const auto& key : family.keys) {
        for (const auto& value : edges) {
          auto args = base->second;
          const auto given = std::find_if(args.begin(), args.end(), [&](const auto& a) { return a.first == key; });
          if (given == args.end()) {
            args.emplace_back(key, value);
          } else {
            given->second = value;
          }
          ASSERT_NO_FATAL_FAILURE(check_one(call_text(family.name, args), total, key == "gamma"));
        }
      }
    }
  }
}

}  // namespace
}  // namespace lrkit::schedules
