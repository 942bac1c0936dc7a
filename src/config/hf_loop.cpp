// The "loop" block smelt's Hugging Face export adds to a config.json
// (docs/export.md): no transformers architecture loops layers, so the looped
// span travels beside the family's own keys and is read back here.
#include <fmt/format.h>

#include "config/hf_keys.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

// "loop": {"first_layer": F, "last_layer": L, "count": N, "residual_scale": S},
// layers 1-based and inclusive as in native JSON's "span"; residual_scale
// defaults to 1/count as there. Several spans: "loops": [{...}, ...] of the
// same objects. Absent or null: no loop. The spans' ranges and counts are
// checked by validate(), as for native configs.
namespace {

LoopConfig read_span(JsonObject loop) {
  LoopConfig l;
  l.first = loop.integer("first_layer");
  l.last = loop.integer("last_layer");
  l.count = loop.integer("count");
  l.residual_scale = loop.number("residual_scale", l.count > 0 ? 1.0 / static_cast<double>(l.count) : 1.0);
  loop.reject_unknown_keys();
  return l;
}

}  // namespace

void read_hf_loop(JsonObject& root, ModelConfig& c) {
  if (root.raw("loop") != nullptr)
    if (auto loop = root.object("loop")) c.loops.push_back(read_span(*loop));
  const auto* list = root.raw("loops");
  if (list == nullptr || list->is_null()) return;
  if (!c.loops.empty() || !list->is_array() || list->empty()) {
    root.violation("loops", json_excerpt(*list),
                   "must be a non-empty list of {\"first_layer\", \"last_layer\", \"count\"}, without \"loop\"");
    return;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    if (!(*list)[i].is_object()) {
      root.violation(fmt::format("loops[{}]", i), json_excerpt((*list)[i]), "must be an object");
      continue;
    }
    c.loops.push_back(
        read_span(JsonObject((*list)[i], fmt::format("{}[{}]", root.field("loops"), i), root.violations())));
  }
}

}  // namespace smelt::config_detail
