// Time to count one config (target: under 1 us median). Run from a Release
// build: ./build/release/benchmarks/count_bench --benchmark_repetitions=10
//        --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/file_io.hpp"

namespace {

void count_file(benchmark::State& state, const char* file) {
  const smelt::ModelConfig config = smelt::read_config(std::string(SMELT_SOURCE_DIR "/examples/") + file);
  for (auto _ : state) {
    smelt::CostReport r = smelt::count(config);
    benchmark::DoNotOptimize(r);
  }
  state.SetLabel(std::to_string(config.num_layers) + " layers");
}

void validate_only(benchmark::State& state) {
  const smelt::ModelConfig config = smelt::read_config(SMELT_SOURCE_DIR "/examples/hf/mixtral-8x7b.json");
  for (auto _ : state) smelt::validate(config);
}

void parse_and_count(benchmark::State& state) {
  const std::string text = smelt::read_text_file(SMELT_SOURCE_DIR "/examples/hf/mixtral-8x7b.json");
  for (auto _ : state) {
    smelt::CostReport r = smelt::count(smelt::parse_config(text));
    benchmark::DoNotOptimize(r);
  }
}

}  // namespace

BENCHMARK_CAPTURE(count_file, mixtral_8x7b, "hf/mixtral-8x7b.json");
BENCHMARK_CAPTURE(count_file, deepseek_v3, "hf/deepseek-v3.json");
BENCHMARK_CAPTURE(count_file, smelt_looped_12l, "smelt-looped-12l.json");
BENCHMARK(validate_only);
BENCHMARK(parse_and_count);
BENCHMARK_MAIN();
