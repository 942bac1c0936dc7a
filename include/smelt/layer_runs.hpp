// LayerRun: layers of a count that cost the same, their layer numbers aside,
// written once. A run is the layers first, first + step, ..., last (1-based):
// a stretch of consecutive layers (step 1), or every step-th layer of a stack
// that repeats a pattern (MoE every second layer, a sliding-window pattern of
// six). A report then grows with the kinds of layers a model has, not with its
// depth: 65,536 layers alternating MoE and dense are two runs. The count report
// (docs/json-schema.md) and the --layers table are written from runs.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/count.hpp"

namespace smelt {

struct LayerRun {
  std::int64_t first = 0;  // 1-based
  std::int64_t last = 0;   // 1-based, inclusive; first + (count() - 1) x step
  std::int64_t step = 1;   // 1 for a single layer
  LayerCost cost;          // the cost of each layer of the run (its `layer` is `first`)

  std::int64_t count() const noexcept { return (last - first) / step + 1; }
  friend bool operator==(const LayerRun&, const LayerRun&) = default;
};

// Whether two layers cost the same in every field but their layer number.
bool same_cost(const LayerCost& a, const LayerCost& b) noexcept;

// Every layer of `cost` (counted from `config`) in exactly one run, the runs in
// order of their first layer. Layers that cost the same form a group; a group
// is cut into runs with one step, the step that gives it the fewest runs among
// 1 and the periods of the config's layer sequence (the length of
// attention.pattern, moe.every when MoE layers are chosen by rule, and their
// least common multiple); a tie goes to the smaller step. The config only
// proposes steps: every run holds layers of equal cost whatever it is. Time:
// layers x (groups + steps), a handful of each.
std::vector<LayerRun> layer_runs(const ModelConfig& config, const CostReport& cost);

}  // namespace smelt
