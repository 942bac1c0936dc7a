// LayerSchedule: the order in which a model executes its layers for one token.
// Looping is expressed here, once, so every count built on the schedule treats
// a looped layer as one set of weights visited several times.
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

struct LayerSchedule {
  std::vector<LayerVisit> visits;  // in execution order

  // Effective depth: the number of layer executions per token.
  std::int64_t executed_layers() const noexcept { return static_cast<std::int64_t>(visits.size()); }
};

// Layers before the span, the span `loop.count` times over (4..9, 4..9), then
// the layers after it. Assumes a validated config.
LayerSchedule schedule(const ModelConfig& config);

}  // namespace smelt
