// ns per evaluation of every schedule family, next to a hand-inlined cosine
// (the floor any schedule object could reach), and the refinement of a
// 10^6-step gradient-norm history (target: under 200 ms).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "lrkit/schedules/factory.hpp"
#include "lrkit/schedules/refine.hpp"

namespace {

using lrkit::schedules::parse_schedule;

constexpr int64_t kTotal = 100000;

const std::vector<std::pair<const char*, const char*>> kFamilies = {
    {"constant", "constant(peak=1e-3, warmup=1%)"},
    {"linear", "linear(peak=1e-3, warmup=1%)"},
    {"cosine", "cosine(peak=1e-3, floor=1e-5, warmup=1%)"},
    {"polynomial", "polynomial(peak=1e-3, power=2, warmup=1%)"},
    {"step", "step(peak=1e-3, every=1000, gamma=0.9)"},
    {"multistep", "multistep(peak=1e-3, milestones=[30%, 60%, 90%])"},
    {"exponential", "exponential(peak=1e-3, gamma=0.9999)"},
    {"invsqrt", "invsqrt(peak=1e-3, warmup=1000)"},
    {"restarts", "restarts(peak=1e-3, period=1000, mult=2)"},
    {"onecycle", "onecycle(peak=1e-3)"},
    {"wsd_1-sqrt", "wsd(peak=1e-3, warmup=2%, decay=20%, shape=1-sqrt)"},
    {"wsd_inverse", "wsd(peak=1e-3, floor=1e-5, decay=20%, shape=inverse)"},
    {"wsds", "wsds(peak=1e-3, budgets=[25000, 50000, 90000])"},
    {"uba", "uba(peak=1e-3, phi=1.5, warmup=1%)"},
    {"rewarm", "rewarm(peak=1e-3)"},
    {"infinite", "infinite(peak=1e-3, const=50%)"},
    {"join", "join(linear(0, 1e-3, 1000), cosine(1e-3, 1e-5), at=[1000])"},
};

void BM_Evaluate(benchmark::State& state, const char* spec) {
  const auto schedule = parse_schedule(spec, kTotal);
  int64_t t = 0;
  for (auto _ : state) {
    benchmark::DoNotOptimize(schedule(t));
    t = t + 7919 < kTotal ? t + 7919 : t + 7919 - kTotal;  // stride through the run
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_InlineCosineBaseline(benchmark::State& state) {
  const double peak = 1e-3, floor = 1e-5, warmup = 1000.0, total = static_cast<double>(kTotal);
  int64_t t = 0;
  for (auto _ : state) {
    const double x = static_cast<double>(t);
    const double lr = x < warmup ? peak * x / warmup
                                 : floor + (peak - floor) * 0.5 * (1 + std::cos(M_PI * (x - warmup) / (total - warmup)));
    benchmark::DoNotOptimize(lr);
    t = t + 7919 < kTotal ? t + 7919 : t + 7919 - kTotal;
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_InlineCosineBaseline);

void BM_Refine(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  std::mt19937 rng(1);
  std::lognormal_distribution<double> noise(0.0, 0.3);
  std::vector<double> norms(n);
  for (size_t i = 0; i < n; ++i) norms[i] = (1.0 + static_cast<double>(i) / static_cast<double>(n)) * noise(rng);
  for (auto _ : state) {
    auto eta = lrkit::schedules::refine_from_norms(norms, static_cast<int64_t>(n), lrkit::schedules::NormKind::L2);
    benchmark::DoNotOptimize(eta.data());
  }
}
BENCHMARK(BM_Refine)->Arg(10000)->Arg(1000000)->Unit(benchmark::kMillisecond);

const bool registered = [] {
  for (const auto& [name, spec] : kFamilies)
    benchmark::RegisterBenchmark((std::string("BM_Evaluate/") + name).c_str(), BM_Evaluate, spec);
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
