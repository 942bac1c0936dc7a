// Time of memory() for one config under one layout (target: under 5 us median,
// docs/memory.md). Run from a Release build:
//   ./build/release/benchmarks/memory_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "smelt/config_io.hpp"
#include "smelt/memory.hpp"

namespace {

void memory_of(benchmark::State& state, const char* file, std::int64_t pp) {
  const smelt::CheckedConfig config = smelt::read_checked_config(std::string(SMELT_SOURCE_DIR "/examples/") + file);
  smelt::MemoryLayout layout;
  layout.micro_batch = 1;
  layout.seq = 4096;
  layout.pp = pp;
  layout.tp = 2;
  layout.dp = 8;
  layout.distributed_optimizer = true;
  for (auto _ : state) {
    smelt::MemoryReport r = smelt::memory(config, layout);
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(std::to_string(config.get().num_layers) + " layers, pp " + std::to_string(pp));
}

}  // namespace

BENCHMARK_CAPTURE(memory_of, smelt_baseline_54b, "smelt-baseline-54b.json", 1);
BENCHMARK_CAPTURE(memory_of, smelt_looped_12l, "smelt-looped-12l.json", 1);
BENCHMARK_CAPTURE(memory_of, deepseek_v3_pp4, "hf/deepseek-v3.json", 4);
BENCHMARK_CAPTURE(memory_of, mixtral_8x7b, "hf/mixtral-8x7b.json", 1);
BENCHMARK_MAIN();
