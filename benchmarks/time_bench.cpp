// Time of step_time() for one config under one layout on a shipped device
// (target: under 50 us median, docs/time.md). Run from a Release build:
//   ./build/release/benchmarks/time_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "smelt/config_io.hpp"
#include "smelt/hardware.hpp"
#include "smelt/time.hpp"

namespace {

void time_of(benchmark::State& state, const char* file, std::int64_t pp) {
  const smelt::CheckedConfig config = smelt::read_checked_config(std::string(SMELT_SOURCE_DIR "/examples/") + file);
  const smelt::HardwareSpec hw = smelt::hardware_spec("h200");
  smelt::MemoryLayout layout;
  layout.micro_batch = 1;
  layout.seq = 4096;
  layout.pp = pp;
  layout.tp = 2;
  layout.dp = 8;
  layout.distributed_optimizer = true;
  for (auto _ : state) {
    smelt::TimeReport r = smelt::step_time(config, layout, hw);
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(std::to_string(config.get().num_layers) + " layers, pp " + std::to_string(pp));
}

}  // namespace

BENCHMARK_CAPTURE(time_of, smelt_baseline_54b, "smelt-baseline-54b.json", 1);
BENCHMARK_CAPTURE(time_of, smelt_looped_12l, "smelt-looped-12l.json", 1);
BENCHMARK_CAPTURE(time_of, deepseek_v3_pp4, "hf/deepseek-v3.json", 4);
BENCHMARK_CAPTURE(time_of, mixtral_8x7b, "hf/mixtral-8x7b.json", 1);
BENCHMARK_MAIN();
