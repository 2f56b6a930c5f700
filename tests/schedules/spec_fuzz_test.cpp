// Randomized input for the spec parser and builders: random token soup and
// mutations of valid specs must either build a schedule whose values are
// finite or throw SpecError; never crash, hang, or throw anything else.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "lrkit/schedules/factory.hpp"

namespace lrkit::schedules {
namespace {

const std::vector<std::string> kFragments = {
    "cosine", "wsd", "wsds", "uba", "join", "warmup", "floor", "scale", "onecycle", "restarts", "step", "multistep",
    "exponential", "invsqrt", "infinite", "rewarm", "constant", "linear", "polynomial", "table", "refined",
    "(", ")", "[", "]", ",", "=", "\"", "%", " ", "peak", "floor", "warmup", "decay", "shape", "phi", "budgets",
    "total", "at", "gamma", "every", "milestones", "period", "mult", "1-sqrt", "inverse", "exp", "0", "1", "-1",
    "1e-3", "1e308", "1e-320", "50%", "100%", "250%", "0.5", "1e15", "99999999999", "nan", "inf", "true", "\\",
    "\x01", "\xff", "length", "min", "by", "norms", "file"};

const std::vector<std::string> kValid = {
    "wsd(peak=3e-4, warmup=2%, decay=20%, shape=1-sqrt, floor=0)",
    "join(linear(0, 1e-3, 200), cosine(1e-3, 1e-5), at=[200])",
    "wsds(peak=1e-3, budgets=[100, 200, 400], decay=10%)",
    "uba(peak=1e-3, phi=1.5, warmup=20)",
    "onecycle(peak=0.1, three_phase=true)",
    "scale(floor(restarts(1, period=7, mult=2), min=0.1), by=2)",
};

void check_one(const std::string& spec, std::optional<int64_t> total) {
  try {
    const Schedule s = parse_schedule(spec, total);
    const int64_t end = s.bounded() ? s.total() : 1000;
    for (int64_t t : {int64_t{0}, int64_t{1}, end / 3, end / 2, end}) {
      const double v = s(t);
      ASSERT_TRUE(std::isfinite(v) && v >= 0) << spec << " gives " << v << " at step " << t;
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

}  // namespace
}  // namespace lrkit::schedules
