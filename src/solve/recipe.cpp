#include "smelt/recipe.hpp"

#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "smelt/error.hpp"
#include "util/violations.hpp"

namespace smelt {
namespace {

// A span of `looped` layers with floor((L - looped) / 2) layers before it.
LoopConfig centred(std::int64_t looped, std::int64_t num_layers) {
  LoopConfig loop;
  if (looped <= 0) return loop;
  loop.first = (num_layers - looped) / 2 + 1;
  loop.last = loop.first + looped - 1;
  return loop;
}

// Parses "0.25" or "25%" as a fraction in [0, 1]; nullopt when it is neither.
std::optional<double> parse_fraction(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  double value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || (text.find('.') == std::string_view::npos && !percent)) return std::nullopt;
  return percent ? value / 100.0 : value;
}

}  // namespace

LoopConfig resolve_loop(const LoopRecipe& recipe, std::int64_t num_layers) {
  detail::Violations errors;
  // The same bound as a config's loop.count, checked before any product of
  // loops and layers is formed.
  if (recipe.loops < 1)
    errors.add("LoopRecipe::loops", fmt::format("{}", recipe.loops), "must be at least 1");
  else if (recipe.loops > LoopRecipe::max_loops)
    errors.add("LoopRecipe::loops", fmt::format("{}", recipe.loops),
               fmt::format("must be at most {}", LoopRecipe::max_loops));
  if (recipe.residual_scale && !(std::isfinite(*recipe.residual_scale) && *recipe.residual_scale > 0))
    errors.add("LoopRecipe::residual_scale", fmt::format("{}", *recipe.residual_scale),
               "must be a positive finite number");
  LoopConfig loop;
  const std::string& span = recipe.span;
  if (span == "middle-half") {
    loop = centred(num_layers / 2, num_layers);
  } else if (span == "full") {
    loop = centred(num_layers, num_layers);
  } else if (span == "0") {  // no layer 0 exists: read it as the fraction 0, no loop
    loop = {};
  } else if (const auto fraction = parse_fraction(span)) {
    if (!(*fraction >= 0 && *fraction <= 1))  // NaN fails both, and may not reach the cast below
      errors.add("LoopRecipe::span", fmt::format("\"{}\"", span), "a fraction must lie in [0, 1]");
    else  // floor, with a little slack so that 0.3 x 10 is 3 despite binary rounding
      loop = centred(static_cast<std::int64_t>(std::floor(*fraction * static_cast<double>(num_layers) + 1e-9)),
                     num_layers);
  } else {
    try {
      parse_span(span, "LoopRecipe::span", loop);
      if (loop.first < 1 || loop.last > num_layers || loop.first > loop.last)
        errors.add("LoopRecipe::span", fmt::format("\"{}\"", span),
                   fmt::format("must satisfy 1 <= first <= last <= {} (the layers)", num_layers));
    } catch (const config_error&) {
      errors.add("LoopRecipe::span", fmt::format("\"{}\"", span),
                 "must be middle-half, full, a fraction (0.25 or 25%) or 1-based layers such as \"4-9\"");
    }
  }
  errors.throw_if_any();
  if (loop.first == 0 || recipe.loops == 1) return {};
  loop.count = recipe.loops;
  loop.residual_scale = recipe.residual_scale.value_or(1.0 / static_cast<double>(recipe.loops));
  return loop;
}

}  // namespace smelt
