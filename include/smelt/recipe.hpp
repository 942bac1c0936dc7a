// The SMELT loop recipe: which layers loop, how many times, and the scale on
// looped residual updates. Spans are spoken as in the paper: "middle-half"
// (the default: m = floor(L/2) layers, floor((L - m)/2) of them before the
// span, so L = 12 loops 4-9 and L = 30 loops 8-22), "full", a fraction of the
// layers such as "0.25" or "25%" (placed in the middle the same way), or
// explicit 1-based inclusive layers "4-9".
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "smelt/config.hpp"

namespace smelt {

struct LoopRecipe {
  static constexpr std::int64_t max_loops = 1024;  // as a config's loop.count

  std::string span = "middle-half";
  std::int64_t loops = 2;                // passes through the span, in [1, max_loops]
  std::optional<double> residual_scale;  // default 1 / loops
  std::optional<std::int64_t> depth;     // the derived model's layer count; default the Baseline's
};

// The loop a recipe gives a model of `num_layers` layers. A span of zero
// layers or loops = 1 gives no loop. Throws config_error naming
// LoopRecipe::span, loops or residual_scale; every range is checked before it
// is used.
LoopConfig resolve_loop(const LoopRecipe& recipe, std::int64_t num_layers);

}  // namespace smelt
