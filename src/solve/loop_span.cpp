// The span words of a loop recipe (include/smelt/recipe.hpp): one parser and
// its inverse.
#include <charconv>
#include <cmath>

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/parse_number.hpp"
#include "smelt/error.hpp"
#include "smelt/recipe.hpp"

namespace smelt {
namespace {

// Parses "0.25" or "25%" as a number; nullopt when it is neither (a bare
// integer is a layer, not a fraction).
std::optional<double> parse_fraction(std::string_view text) {
  const bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  double value = 0;
  if (!detail::parse_number(text, value) || (text.find('.') == std::string_view::npos && !percent)) return std::nullopt;
  return percent ? value / 100.0 : value;
}

}  // namespace

LoopSpan parse_loop_span(std::string_view text, std::string_view field) {
  const auto refuse = [&](std::string rule) {
    return config_error(Violation(std::string(field), fmt::format("\"{}\"", detail::excerpt(text)), std::move(rule)));
  };
  if (text == "middle-half") return LoopSpan::middle_half();
  if (text == "full") return LoopSpan::full();
  if (text == "keep") return LoopSpan::keep();
  if (text == "0") return LoopSpan::of_fraction(0);  // no layer 0 exists: the fraction 0, no loop
  if (const auto fraction = parse_fraction(text)) {
    if (!(*fraction >= 0 && *fraction <= 1)) throw refuse("a fraction must lie in [0, 1]");  // NaN fails both
    return LoopSpan::of_fraction(*fraction);
  }
  try {
    LoopConfig loop;
    parse_span(text, field, loop);  // the layer syntax of a config's loop.span
    return LoopSpan::layers(loop.first, loop.last);
  } catch (const config_error&) {
    throw refuse("must be middle-half, full, keep, a fraction (0.25 or 25%) or 1-based layers such as \"4-9\"");
  }
}

std::string to_string(const LoopSpan& span) {
  switch (span.kind) {
    case LoopSpan::Kind::middle_half:
      return "middle-half";
    case LoopSpan::Kind::full:
      return "full";
    case LoopSpan::Kind::keep:
      return "keep";
    case LoopSpan::Kind::fraction: {
      // The shortest text that reads back to the same double, with the decimal
      // point the parser wants ("1" would be layer 1): 1 -> "1.0", 1e-05 -> "1.0e-05".
      std::string text = fmt::format("{}", span.fraction);
      if (!std::isfinite(span.fraction) || text.find('.') != std::string::npos) return text;
      const auto exponent = text.find('e');
      text.insert(exponent == std::string::npos ? text.size() : exponent, ".0");
      return text;
    }
    case LoopSpan::Kind::layers:
      return fmt::format("{}-{}", span.first, span.last);
  }
  return "?";
}

}  // namespace smelt
