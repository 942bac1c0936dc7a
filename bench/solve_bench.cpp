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

// The slowest realistic call: a Qwen3-235B-A22B-sized Baseline (94 layers,
// H = 4096, 128 experts, top-8) matched on FLOPs and parameters alone (no KV,
// so no geometry can be ruled out early), with free query heads and fine
// alignments. The CLI's
//   smelt-match derive bench/data/qwen3-235b-a22b.json --match flops,params --free-heads
//     --align-hidden 8 --align-experts 1 --align-head-dim 4
void solve_qwen3_235b_fine(benchmark::State& state) {
  const smelt::ModelConfig b = smelt::read_config(SMELT_SOURCE_DIR "/bench/data/qwen3-235b-a22b.json");
  const smelt::SearchSpace space{.align_hidden = 8, .align_experts = 1, .align_head_dim = 4, .free_heads = true};
  std::int64_t evaluated = 0;
  std::int64_t size = 0;
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve(b, {}, space, {.match = {smelt::Budget::flops, smelt::Budget::params}});
    evaluated = r.evaluated;
    size = r.space_size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_counted"] = static_cast<double>(evaluated);
  state.counters["space_size"] = static_cast<double>(size);
}

}  // namespace

BENCHMARK(solve_default_space)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_two_contexts)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_qwen3_235b_fine)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(brute_force_default_space)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
