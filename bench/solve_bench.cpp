// Solving the default space for the 54B-class Baseline (30 layers, H = 2304,
// 336 experts, top-8), beside brute-force enumeration of the same space; a
// wide attention domain; the 16 Appendix-A cells; the slowest realistic call.
// Targets (docs/solver.md section 12): the 54B-class space under 10 ms, also
// over about 10^4 attention geometries; the 16 cells together under 1 s; every
// realistic call under 1 s; brute force at least 100x slower than solve().
//   ./build/release/bench/solve_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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

// An approximation, with today's options, of the larger default attention
// domain: query heads free, KV heads any divisor of them, head_dim 32 to 256
// (about 10^4 geometries).
void solve_wide_attention(benchmark::State& state) {
  const smelt::ModelConfig b = baseline();
  const smelt::SearchSpace space{
      .head_dim = smelt::KnobRange{32, 256}, .kv_heads = smelt::KnobRange{1, 64}, .heads = smelt::KnobRange{8, 64}};
  std::int64_t evaluated = 0;
  std::int64_t size = 0;
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve(b, {}, space);
    evaluated = r.evaluated;
    size = r.space_size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_counted"] = static_cast<double>(evaluated);
  state.counters["space_size"] = static_cast<double>(size);
}

// The 16 Appendix-A cells of the SMELT paper (examples/paper/*-kv2x*.json),
// solved one after the other with the paper's alignment freedom and the
// expert width searched; with the argument 1, over the wider attention domain
// of solve_wide_attention as well (query heads free, KV heads 1 to 64,
// head_dim 32 to 256). Counters: summed over the 16.
void solve_paper_cells(benchmark::State& state) {
  std::vector<smelt::ModelConfig> cells;
  for (const char* scale : {"100m", "200m", "600m", "1p6b"})
    for (const char* experts : {"e8", "e64", "e192", "e336"}) {
      const std::string kv = std::string(scale) == "100m" ? "kv2x112" : "kv2x128";
      cells.push_back(smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/paper/paper-") + scale + "-" +
                                         experts + "-" + kv + ".json"));
    }
  smelt::SearchSpace space{
      .align_hidden = 8, .align_experts = 8, .align_head_dim = 4, .ffn = smelt::FfnScaling::searched};
  if (state.range(0) == 1) {
    space.head_dim = smelt::KnobRange{32, 256};
    space.kv_heads = smelt::KnobRange{1, 64};
    space.free_heads = true;
  }
  std::int64_t evaluated = 0;
  std::int64_t size = 0;
  for (auto _ : state) {
    evaluated = 0;
    size = 0;
    for (const smelt::ModelConfig& b : cells) {
      const smelt::MatchResult r = smelt::solve(b, {}, space);
      evaluated += r.evaluated;
      size += r.space_size;
      benchmark::DoNotOptimize(r);
    }
  }
  state.counters["configs_counted"] = static_cast<double>(evaluated);
  state.counters["space_size"] = static_cast<double>(size);
}

}  // namespace

BENCHMARK(solve_default_space)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_two_contexts)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_wide_attention)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_paper_cells)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_qwen3_235b_fine)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(brute_force_default_space)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
