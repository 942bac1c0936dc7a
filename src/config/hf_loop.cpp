// The "loop" block smelt's Hugging Face export adds to a config.json
// (docs/export.md): no transformers architecture loops layers, so the looped
// span travels beside the family's own keys and is read back here.
#include <fmt/format.h>

#include "config/hf_keys.hpp"

namespace smelt::detail {

// "loop": {"first_layer": F, "last_layer": L, "count": N, "residual_scale": S},
// layers 1-based and inclusive as in native JSON's "span"; residual_scale
// defaults to 1/count as there. Absent or null: no loop. The span's range and
// the count's are checked by validate(), as for native configs.
void read_hf_loop(JsonObject& root, ModelConfig& c) {
  if (root.raw("loop") == nullptr) return;
  auto loop = root.object("loop");
  if (!loop) return;
  c.loop.first = loop->integer("first_layer");
  c.loop.last = loop->integer("last_layer");
  c.loop.count = loop->integer("count");
  c.loop.residual_scale =
      loop->number("residual_scale", c.loop.count > 0 ? 1.0 / static_cast<double>(c.loop.count) : 1.0);
  loop->reject_unknown_keys();
}

}  // namespace smelt::detail
