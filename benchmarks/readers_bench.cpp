// The native config reader over a long list of words, good ("full") or bad ("bad!"): past the cap of listed
// violations a bad word is counted, not written, so a million bad words cost about what a million good ones do
// (before the cap stopped the work: about 8 us a bad word against 0.1 us a good one). The allocation counts behind
// this are a test (tests/unit/util/readers_alloc_test.cpp); the time is measured here.
#include <string>

#include <benchmark/benchmark.h>

#include "pattern_words.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"

namespace {

void read_words(benchmark::State& state, const char* word) {
  const int n = static_cast<int>(state.range(0));
  const std::string text = smelt::test::with_pattern_words(word, n);
  for (auto _ : state) {
    try {
      benchmark::DoNotOptimize(smelt::parse_native_config(text, "words.json"));
    } catch (const smelt::config_error& e) {
      benchmark::DoNotOptimize(e.what());
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void good_words(benchmark::State& state) { read_words(state, "full"); }
void bad_words(benchmark::State& state) { read_words(state, "bad!"); }

}  // namespace

BENCHMARK(good_words)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK(bad_words)->Arg(1'000'000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();
