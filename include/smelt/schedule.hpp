// LayerSchedule: the order in which a model executes its layers for one token.
// Looping is expressed here, once, so every count built on the schedule treats
// a looped layer as one set of weights visited several times. The schedule is
// held run-length (at most three blocks: before the span, the span, after it),
// so a count costs the same whatever the loop count: 65,536 layers looped
// 1,024 times are three blocks, not 67 million visits.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/config.hpp"

namespace smelt {

struct LayerVisit {
  std::int64_t layer = 0;  // 0-based index of the (weight-owning) layer
  std::int64_t visit = 0;  // 0-based: which pass through the loop this is

  friend bool operator==(const LayerVisit&, const LayerVisit&) = default;
};

// Layers first..last (0-based, inclusive), run in order `passes` times over.
struct LayerBlock {
  std::int64_t first = 0;
  std::int64_t last = 0;
  std::int64_t passes = 1;

  std::int64_t layers() const noexcept { return last - first + 1; }
  friend bool operator==(const LayerBlock&, const LayerBlock&) = default;
};

struct LayerSchedule {
  std::vector<LayerBlock> blocks;  // in execution order; every layer lies in exactly one

  // Effective depth: the number of layer executions per token.
  std::int64_t executed_layers() const noexcept;
  // Every visit in execution order: executed_layers() entries, for callers
  // that run the visits one by one (bound executed_layers() first).
  std::vector<LayerVisit> visits() const;
};

// Layers before the span, the span `loop.count` times over (4..9, 4..9), then
// the layers after it. Assumes a validated config.
LayerSchedule schedule(const ModelConfig& config);

}  // namespace smelt
