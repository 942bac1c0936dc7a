#include "smelt/recipe.hpp"

#include <cmath>

#include <fmt/format.h>

#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "util/option_bounds.hpp"

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

}  // namespace

LoopConfig resolve_loop(const LoopRecipe& recipe, std::int64_t num_layers) {
  detail::Violations errors;
  // The same bound as a config's loop.count, checked before any product of
  // loops and layers is formed.
  const auto& loops = detail::option_row<LoopRecipe>("loops");
  if (static_cast<double>(recipe.loops) < loops.lo)
    errors.add("LoopRecipe::loops", fmt::format("{}", recipe.loops), fmt::format("must be at least {}", loops.lo));
  else if (static_cast<double>(recipe.loops) > loops.hi)
    errors.add("LoopRecipe::loops", fmt::format("{}", recipe.loops), fmt::format("must be at most {}", loops.hi));
  if (recipe.residual_scale && !(std::isfinite(*recipe.residual_scale) && *recipe.residual_scale > 0))
    errors.add("LoopRecipe::residual_scale", fmt::format("{}", *recipe.residual_scale),
               "must be a positive finite number");
  LoopConfig loop;
  const LoopSpan& span = recipe.span;
  const std::string shown = fmt::format("\"{}\"", to_string(span));
  switch (span.kind) {
    case LoopSpan::Kind::middle_half:
      loop = centred(num_layers / 2, num_layers);
      break;
    case LoopSpan::Kind::full:
      loop = centred(num_layers, num_layers);
      break;
    case LoopSpan::Kind::keep:  // the solver keeps the Baseline's spans (solve/space.cpp)
      break;
    case LoopSpan::Kind::fraction:
      if (!(span.fraction >= 0 && span.fraction <= 1))  // NaN fails both, and may not reach the cast below
        errors.add("LoopRecipe::span", shown, "a fraction must lie in [0, 1]");
      else  // floor, with a little slack so that 0.3 x 10 is 3 despite binary rounding
        loop = centred(static_cast<std::int64_t>(std::floor(span.fraction * static_cast<double>(num_layers) + 1e-9)),
                       num_layers);
      break;
    case LoopSpan::Kind::layers:
      if (span.first < 1 || span.last > num_layers || span.first > span.last)
        errors.add("LoopRecipe::span", shown,
                   fmt::format("must satisfy 1 <= first <= last <= {} (the layers)", num_layers));
      else
        loop.first = span.first, loop.last = span.last;
      break;
  }
  errors.throw_if_any();
  if (loop.first == 0 || recipe.loops == 1) return {};
  loop.count = recipe.loops;
  loop.residual_scale = recipe.residual_scale.value_or(1.0 / static_cast<double>(recipe.loops));
  return loop;
}

}  // namespace smelt
