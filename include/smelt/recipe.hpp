// The SMELT loop recipe: which layers loop, how many times, and the scale on
// looped residual updates. Spans are spoken as in the paper: the middle half
// (the default: m = floor(L/2) layers, floor((L - m)/2) of them before the
// span, so L = 12 loops 4-9 and L = 30 loops 8-22), the full depth, a fraction
// of the layers (placed in the middle the same way), or explicit 1-based
// inclusive layers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "smelt/config.hpp"
#include "smelt/option_fields.hpp"

namespace smelt {

// Which layers a recipe loops, resolved against a depth by resolve_loop.
struct LoopSpan {
  // keep: no new loop; the Baseline's own spans (several, with their extras) stay as they are.
  enum class Kind { middle_half, full, fraction, layers, keep };

  Kind kind = Kind::middle_half;
  double fraction = 0;     // Kind::fraction: of the layers, in [0, 1]; 0 loops nothing
  std::int64_t first = 0;  // Kind::layers: 1-based, inclusive
  std::int64_t last = 0;

  static LoopSpan middle_half() { return {}; }
  static LoopSpan full() { return {Kind::full, 0, 0, 0}; }
  static LoopSpan keep() { return {Kind::keep, 0, 0, 0}; }
  static LoopSpan of_fraction(double f) { return {Kind::fraction, f, 0, 0}; }
  static LoopSpan layers(std::int64_t first_layer, std::int64_t last_layer) {
    return {Kind::layers, 0, first_layer, last_layer};
  }

  friend bool operator==(const LoopSpan&, const LoopSpan&) = default;
};

// The span's words, one parser for every reader: "middle-half", "full", "keep", a
// fraction "0.25" or percentage "25%" (a fraction has a decimal point: a bare
// integer is a layer, except "0", the fraction 0), or layers "4-9" (a single
// layer "7"). Throws config_error naming `field`, the text and the rule; a
// fraction outside [0, 1] is refused here.
LoopSpan parse_loop_span(std::string_view text, std::string_view field);

// The words parse_loop_span reads back to the same span ("middle-half", "0.25", "4-9").
std::string to_string(const LoopSpan& span);

struct LoopRecipe {
  static constexpr std::int64_t max_loops = 1024;  // as a config's loop.count

  LoopSpan span;
  std::int64_t loops = 2;                // passes through the span, in [1, max_loops]
  std::optional<double> residual_scale;  // default 1 / loops
  std::optional<std::int64_t> depth;     // the derived model's layer count; default the Baseline's
};

// LoopRecipe's fields (include/smelt/option_fields.hpp).
template <>
struct OptionTable<LoopRecipe> {
  static constexpr std::string_view owner = "LoopRecipe";
  using Field = OptionField<LoopRecipe, LoopSpan, std::int64_t, std::optional<double>, std::optional<std::int64_t>>;
  static constexpr auto fields = std::to_array<Field>({
      {"span", OptionKind::word, &LoopRecipe::span, 0, 0,
       "Looped layers: middle-half, full, a fraction (0.25 or 25%), 1-based \"4-9\", or keep (the Baseline's own)"},
      {"loops", OptionKind::integer, &LoopRecipe::loops, 1, LoopRecipe::max_loops, "Passes through the span"},
      {"residual_scale", OptionKind::number, &LoopRecipe::residual_scale, -kUnbounded, kUnbounded,
       "Scale on looped residual updates, positive and finite (default 1/{loops})"},
      {"depth", OptionKind::integer, &LoopRecipe::depth, 1, 1 << 16,
       "Layers of the derived model (default: the Baseline's)"},
  });
};

// The loop a recipe gives a model of `num_layers` layers. A span of zero
// layers or loops = 1 gives no loop. Throws config_error naming
// LoopRecipe::span, loops or residual_scale; every range is checked before it
// is used.
LoopConfig resolve_loop(const LoopRecipe& recipe, std::int64_t num_layers);

}  // namespace smelt
