// Solving the default space for the 54B-class Baseline (30 layers, H = 2304,
// 336 experts, top-8), beside brute-force enumeration of the same space.
// Targets: solve under 50 ms; brute force at least 100x slower.
//   ./build/release/bench/solve_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "smelt/io.hpp"
#include "smelt/solve.hpp"

namespace {

smelt::ModelConfig baseline() { return smelt::read_config(SMELT_SOURCE_DIR "/examples/smelt-baseline-54b.json"); }

void solve_default_space(benchmark::State& state) {
  const smelt::ModelConfig b = baseline();
  std::int64_t evaluated = 0;
  std::int64_t space = 0;
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve(b, {});
    evaluated = r.evaluated;
    space = r.space_size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_counted"] = static_cast<double>(evaluated);
  state.counters["space_size"] = static_cast<double>(space);
}

void brute_force_default_space(benchmark::State& state) {
  const smelt::ModelConfig b = baseline();
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve_brute_force(b, {});
    benchmark::DoNotOptimize(r);
  }
}

void solve_two_contexts(benchmark::State& state) {
  const smelt::ModelConfig b = baseline();
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve(b, {}, {}, {.contexts = {4096, 32768}});
    benchmark::DoNotOptimize(r);
  }
}

}  // namespace

BENCHMARK(solve_default_space)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_two_contexts)->Unit(benchmark::kMillisecond);
BENCHMARK(brute_force_default_space)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
