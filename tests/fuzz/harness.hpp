// One libFuzzer entry point per harness. Each catches what bad input may throw
// (smelt::error and its children); anything else escaping, a sanitizer report
// or a failed round trip is a finding. replay_main.cpp runs the same function
// over a corpus without libFuzzer, so every build replays every kept input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "smelt/count.hpp"
#include "smelt/layer_runs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace smelt::fuzz {

inline std::string_view text_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// A property that must hold for every input: a finding when it does not.
inline void require(bool holds) {
  if (!holds) __builtin_trap();
}

// A counted config's layer runs (what count --json writes) hold every layer
// exactly once, each at the cost of its run, in order of their first layer.
inline void require_layer_runs(const ModelConfig& c, const CostReport& r) {
  std::vector<int> seen(r.layers.size(), 0);
  std::int64_t previous = 0;
  for (const LayerRun& run : layer_runs(c, r)) {
    require(run.first > previous && run.first <= run.last && run.step >= 1 && run.last <= c.num_layers);
    require((run.last - run.first) % run.step == 0 && (run.count() > 1 || run.step == 1));
    previous = run.first;
    for (std::int64_t layer = run.first; layer <= run.last; layer += run.step) {
      const auto i = static_cast<std::size_t>(layer - 1);
      require(++seen[i] == 1 && same_cost(r.layers[i], run.cost));
    }
  }
  for (const int s : seen) require(s == 1);
}

}  // namespace smelt::fuzz
