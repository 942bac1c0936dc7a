// The solver's speed (docs/solver.md section 12). Targets: the 54B-class
// example's default space under 10 ms; the 16 Appendix-A cells together under
// 1 s; the slow Qwen3-235B-sized call under 1 s; memory and time matched beside
// the three budgets, and a sweep with time matched, under 1 s. Counters: the
// space size and the configs counted.
//   ./build/release/benchmarks/solve_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "smelt/config_io.hpp"
#include "smelt/solve.hpp"
#include "smelt/sweep.hpp"

namespace {

smelt::ModelConfig baseline() { return smelt::read_config(SMELT_SOURCE_DIR "/examples/smelt-baseline-54b.json"); }

// Solves one question per iteration; the counters are the last result's.
void measure(benchmark::State& state, const smelt::ModelConfig& b, const smelt::SearchSpace& space,
             const smelt::MatchOptions& options = {}) {
  std::int64_t evaluated = 0;
  std::int64_t size = 0;
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve(b, {}, space, options);
    evaluated = r.evaluated;
    size = r.space_size;
    benchmark::DoNotOptimize(r);
  }
  state.counters["configs_counted"] = static_cast<double>(evaluated);
  state.counters["space_size"] = static_cast<double>(size);
}

// The default space: 5,255 attention geometries under the shape rules.
void solve_default_space(benchmark::State& state) { measure(state, baseline(), {}); }

// The same under a memory limit: an H100's 80 GiB under a training layout (tp 2, ep 8, pp 5, dp 8, distributed
// optimizer, bf16 weights, fp32 gradients and Adam, micro-batch 1 x 4096, selective recompute), which the best
// candidates meet (about 44 GiB); 920 GiB per GPU at the default layout, which drops candidates (the best derived
// config, 938 GiB, does not fit); and with memory matched as a fourth budget.
void solve_default_space_h100(benchmark::State& state) {
  smelt::MatchOptions o;
  o.memory_limit = smelt::parse_device_memory("h100", "memory_limit");
  smelt::MemoryLayout& l = o.memory_layout;
  l.tp = 2, l.ep = 8, l.pp = 5, l.dp = 8, l.distributed_optimizer = true, l.seq = 4096;
  l.param_dtype = smelt::Dtype::bf16, l.grad_dtype = l.optimizer_dtype = smelt::Dtype::fp32;
  l.recompute = smelt::Recompute::selective;
  measure(state, baseline(), {}, o);
}
void solve_default_space_memory_limit(benchmark::State& state) {
  smelt::MatchOptions o;
  o.memory_limit.bytes = std::int64_t{920} << 30;
  measure(state, baseline(), {}, o);
}
void solve_default_space_memory_matched(benchmark::State& state) {
  smelt::MatchOptions o;
  o.match.push_back(smelt::Budget::memory);
  measure(state, baseline(), {}, o);
}

// The attention box the default was before the shape rules (query heads kept,
// KV heads and head_dim up to the Baseline's 6 and 96), under the width rule:
// 337,680 candidates, few enough to count every one.
const smelt::SearchSpace kOldBox{
    .head_dim = smelt::KnobRange{32, 96}, .kv_heads = smelt::KnobRange{1, 6}, .free_heads = false};

void solve_old_box(benchmark::State& state) { measure(state, baseline(), kOldBox); }

void brute_force_old_box(benchmark::State& state) {
  const smelt::ModelConfig b = baseline();
  for (auto _ : state) {
    const smelt::MatchResult r = smelt::solve_brute_force(b, {}, kOldBox);
    benchmark::DoNotOptimize(r);
  }
}

void solve_two_contexts(benchmark::State& state) { measure(state, baseline(), {}, {.contexts = {4096, 32768}}); }

// The slowest realistic call: a Qwen3-235B-A22B-sized Baseline (94 layers,
// H = 4096, 128 experts, top-8) matched on FLOPs and parameters alone (no KV,
// so no geometry can be ruled out early), with fine alignments, over the
// default attention domain (query heads free, as --free-heads asked before the
// shape rules made it the default). The CLI's
//   smelt-match derive benchmarks/data/qwen3-235b-a22b.json --match flops,params
//     --align-hidden 8 --align-experts 1 --align-head-dim 4
void solve_qwen3_235b_fine(benchmark::State& state) {
  const smelt::ModelConfig b = smelt::read_config(SMELT_SOURCE_DIR "/bench/data/qwen3-235b-a22b.json");
  const smelt::SearchSpace space{.align_hidden = 8, .align_experts = 1, .align_head_dim = 4};
  measure(state, b, space, {.match = {smelt::Budget::flops, smelt::Budget::params}});
}

// The 16 Appendix-A cells of the SMELT paper, solved one after the other with
// the paper's alignment freedom and the expert width searched, as
// example.paper.beats_paper does: argument 0, reconstruction A (2 KV heads,
// examples/paper/*-kv2x*.json); 1, reconstruction B (GQA 4, half the
// head_dim). Counters: summed over the 16.
void solve_paper_cells(benchmark::State& state) {
  std::vector<smelt::ModelConfig> cells;
  for (const char* scale : {"100m", "200m", "600m", "1p6b"})
    for (const char* experts : {"e8", "e64", "e192", "e336"}) {
      const std::string s = scale;
      const std::string kv = state.range(0) == 0 ? (s == "100m" ? "kv2x112" : "kv2x128")
                             : s == "100m"       ? "kv3x56"
                             : s == "200m"       ? "kv5x64"
                             : s == "600m"       ? "kv7x64"
                                                 : "kv9x64";
      cells.push_back(smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/paper/paper-") + scale + "-" +
                                         experts + "-" + kv + ".json"));
    }
  const smelt::SearchSpace space{
      .align_hidden = 8, .align_experts = 8, .align_head_dim = 4, .ffn = smelt::FfnScaling::searched};
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

// The three budgets and every --match set with memory or time, on the default space of the 54B-class and the
// 12-layer examples, as `smelt-match derive BASELINE --match SET --hardware h100` solves them: the default
// layout, relaxations on (they run where the best misses the tolerance); docs/solver.md section 12.
const std::vector<std::pair<std::string, std::vector<smelt::Budget>>>& match_sets() {
  using B = smelt::Budget;
  static const std::vector<std::pair<std::string, std::vector<B>>> sets{
      {"flops,params,kv", {B::flops, B::params, B::kv}},
      {"flops,params,kv,memory", {B::flops, B::params, B::kv, B::memory}},
      {"flops,params,kv,time", {B::flops, B::params, B::kv, B::time}},
      {"flops,params,kv,memory,time", {B::flops, B::params, B::kv, B::memory, B::time}},
      {"memory", {B::memory}},
      {"time", {B::time}},
      {"memory,time", {B::memory, B::time}}};
  return sets;
}

void derive_match(benchmark::State& state, const char* example, const std::vector<smelt::Budget>& match) {
  const smelt::ModelConfig b = smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/") + example);
  measure(state, b, {}, {.match = match, .hardware = "h100"});
}

// The same search without the relaxations (`--no-relaxations`): one solve, where derive_match's call is one solve
// and, when its best misses the tolerance, one more per single relaxation of the space.
void derive_match_one_search(benchmark::State& state, const char* example, const std::vector<smelt::Budget>& match) {
  const smelt::ModelConfig b = smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/") + example);
  measure(state, b, {}, {.match = match, .relaxations = false, .hardware = "h100"});
}

// A default sweep (17 rows: the Baseline, 4 spans x 3 loop counts, 4 depths) of the 12-layer and the 54B-class
// examples with time matched beside the three budgets, `smelt-match sweep BASELINE --match flops,params,kv,time
// --hardware h100` (sweep_time), or alone, `--match time` (sweep_time_alone).
void sweep_match(benchmark::State& state, const char* example, const std::vector<smelt::Budget>& match) {
  const smelt::ModelConfig b = smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/") + example);
  const smelt::MatchOptions o{.match = match, .hardware = "h100"};
  for (auto _ : state) {
    const std::vector<smelt::SweepRow> rows = smelt::sweep(b, {}, {}, o);
    benchmark::DoNotOptimize(rows);
  }
}

// Registered at start-up, one per example and --match set.
const bool registered = [] {
  for (const auto& [short_name, example] :
       {std::pair{"54b", "smelt-baseline-54b.json"}, std::pair{"12l", "smelt-baseline-12l.json"}})
    for (const auto& [name, match] : match_sets()) {
      const std::string label = std::string("derive_match/") + short_name + "/" + name;
      benchmark::RegisterBenchmark(label.c_str(), derive_match, example, match)->Unit(benchmark::kMillisecond);
      const std::string one = std::string("derive_match_one_search/") + short_name + "/" + name;
      benchmark::RegisterBenchmark(one.c_str(), derive_match_one_search, example, match)->Unit(benchmark::kMillisecond);
    }
  using B = smelt::Budget;
  for (const auto& [short_name, example] :
       {std::pair{"12l", "smelt-baseline-12l.json"}, std::pair{"54b", "smelt-baseline-54b.json"}}) {
    benchmark::RegisterBenchmark((std::string("sweep_time/") + short_name).c_str(), sweep_match, example,
                                 std::vector<B>{B::flops, B::params, B::kv, B::time})
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string("sweep_time_alone/") + short_name).c_str(), sweep_match, example,
                                 std::vector<B>{B::time})
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace

BENCHMARK(solve_default_space)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_default_space_h100)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_default_space_memory_limit)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_default_space_memory_matched)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(solve_two_contexts)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_old_box)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_paper_cells)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(solve_qwen3_235b_fine)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK(brute_force_old_box)->Unit(benchmark::kMillisecond)->Iterations(1);
BENCHMARK_MAIN();
