// Which layers are MoE, all at once: ModelConfig::is_moe_layer searches an
// explicit moe.layers list on every call, so asking it once per layer costs
// layers x list (65536 x 32768 for a hostile config); this is one pass.
#pragma once

#include <cstdint>
#include <vector>

#include "smelt/config.hpp"

namespace smelt::export_detail {

inline std::vector<bool> moe_layer_flags(const ModelConfig& c) {
  std::vector<bool> out(static_cast<std::size_t>(c.num_layers > 0 ? c.num_layers : 0), false);
  if (!c.is_moe()) return out;
  if (c.moe.layers.empty()) {
    for (std::int64_t i = 0; i < c.num_layers; ++i) out[static_cast<std::size_t>(i)] = c.is_moe_layer(i);
    return out;
  }
  for (const std::int64_t layer : c.moe.layers)  // 1-based, checked by validate()
    if (layer >= 1 && layer <= c.num_layers) out[static_cast<std::size_t>(layer - 1)] = true;
  return out;
}

}  // namespace smelt::export_detail
