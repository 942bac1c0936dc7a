// Loop recipes: the paper's spans and every way to ask for a bad one.
#include <catch2/catch.hpp>

#include <cmath>

#include "smelt/error.hpp"
#include "smelt/recipe.hpp"

using namespace smelt;

namespace {
std::string span_of(const std::string& span, std::int64_t layers, std::int64_t loops = 2) {
  const LoopConfig l = resolve_loop({.span = parse_loop_span(span, "LoopRecipe::span"), .loops = loops}, layers);
  return l.active() ? format_span(l) : "none";
}
std::vector<std::string> errors_of(const LoopRecipe& r, std::int64_t layers) {
  try {
    (void)resolve_loop(r, layers);
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}
// The errors of reading `text` as a span.
std::vector<std::string> parse_errors(const std::string& text) {
  try {
    (void)parse_loop_span(text, "LoopRecipe::span");
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}
}  // namespace

TEST_CASE("the middle half loops the paper's layers", "[recipe]") {
  // L = 12: m = 6 looped, floor((12 - 6)/2) = 3 before: layers 4-9. L = 30: m = 15, 7 before: 8-22.
  CHECK(span_of("middle-half", 12) == "4-9");
  CHECK(span_of("middle-half", 30) == "8-22");
  // L = 13: m = 6, floor(7/2) = 3 before: 4-9.
  CHECK(span_of("middle-half", 13) == "4-9");
}

TEST_CASE("full, fractions, percentages and explicit spans resolve", "[recipe]") {
  CHECK(span_of("full", 12) == "1-12");
  CHECK(span_of("0.25", 12) == "5-7");  // 3 layers, 4 before
  CHECK(span_of("25%", 12) == "5-7");
  CHECK(span_of("0.3", 10) == "4-6");  // floor(0.3 x 10) = 3 despite binary rounding
  CHECK(span_of("1.0", 12) == "1-12");
  CHECK(span_of("0.0", 12) == "none");
  CHECK(span_of("0", 12) == "none");  // no layer 0: the fraction 0
  CHECK(span_of("2-5", 12) == "2-5");
  CHECK(span_of("7", 12) == "7-7");
  CHECK(span_of("middle-half", 12, 1) == "none");  // one pass is no loop
}

TEST_CASE("the residual scale defaults to one over the loop count", "[recipe]") {
  CHECK(resolve_loop({.loops = 3}, 12).residual_scale == 1.0 / 3.0);
  CHECK(resolve_loop({.loops = 2, .residual_scale = 0.7}, 12).residual_scale == 0.7);
  CHECK(resolve_loop({.loops = 4}, 12).count == 4);
}

TEST_CASE("bad recipes name the option and the rule", "[recipe]") {
  CHECK(errors_of({.span = LoopSpan::layers(4, 19), .loops = 0}, 12) ==
        std::vector<std::string>{"LoopRecipe::loops = 0: must be at least 1",
                                 "LoopRecipe::span = \"4-19\": must satisfy 1 <= first <= last <= 12 (the layers)"});
  CHECK(parse_errors("1.5") == std::vector<std::string>{"LoopRecipe::span = \"1.5\": a fraction must lie in [0, 1]"});
  CHECK(parse_errors("middle") ==
        std::vector<std::string>{
            "LoopRecipe::span = \"middle\": must be middle-half, full, keep, a fraction (0.25 or 25%) or "
            "1-based layers such as \"4-9\""});
  CHECK(errors_of({.residual_scale = -1.0}, 12) ==
        std::vector<std::string>{"LoopRecipe::residual_scale = -1: must be a positive finite number"});
}

TEST_CASE("recipe ranges are checked before any arithmetic on them", "[recipe]") {
  // 2^63 - 1 loops once overflowed (loops - 1) x span in the solver; NaN% was
  // cast to an integer (undefined) because NaN fails both < 0 and > 1.
  CHECK(errors_of({.loops = INT64_MAX}, 12) ==
        std::vector<std::string>{"LoopRecipe::loops = 9223372036854775807: must be at most 1024"});
  CHECK(errors_of({.loops = 1025}, 12) == std::vector<std::string>{"LoopRecipe::loops = 1025: must be at most 1024"});
  CHECK(resolve_loop({.loops = 1024}, 12).count == 1024);
  CHECK(parse_errors("nan%") == std::vector<std::string>{"LoopRecipe::span = \"nan%\": a fraction must lie in [0, 1]"});
  CHECK(parse_errors("nan") ==
        std::vector<std::string>{
            "LoopRecipe::span = \"nan\": must be middle-half, full, keep, a fraction (0.25 or 25%) or 1-based "
            "layers such as \"4-9\""});
  CHECK(parse_errors("inf%") == std::vector<std::string>{"LoopRecipe::span = \"inf%\": a fraction must lie in [0, 1]"});
}

TEST_CASE("a span is a type: one parser, and words that read back to the same span", "[recipe]") {
  CHECK(parse_loop_span("middle-half", "s") == LoopSpan::middle_half());
  CHECK(parse_loop_span("full", "s") == LoopSpan::full());
  CHECK(parse_loop_span("0", "s") == LoopSpan::of_fraction(0));  // no layer 0: the fraction 0
  CHECK(parse_loop_span("0%", "s") == LoopSpan::of_fraction(0));
  CHECK(parse_loop_span("25%", "s") == LoopSpan::of_fraction(0.25));
  CHECK(parse_loop_span("0.25", "s") == LoopSpan::of_fraction(0.25));
  CHECK(parse_loop_span("4-9", "s") == LoopSpan::layers(4, 9));
  CHECK(parse_loop_span("7", "s") == LoopSpan::layers(7, 7));    // a bare integer is a layer
  CHECK(parse_loop_span("9-4", "s") == LoopSpan::layers(9, 4));  // read as written; resolve_loop refuses it
  // A fraction keeps its decimal point, else "1" would read back as layer 1.
  CHECK(to_string(LoopSpan::of_fraction(1)) == "1.0");
  CHECK(to_string(LoopSpan::of_fraction(0)) == "0.0");
  CHECK(to_string(LoopSpan::of_fraction(1e-5)) == "1.0e-05");
  CHECK(to_string(LoopSpan::layers(4, 9)) == "4-9");
  for (const LoopSpan& s :
       {LoopSpan::middle_half(), LoopSpan::full(), LoopSpan::of_fraction(0.3), LoopSpan::of_fraction(1),
        LoopSpan::of_fraction(1e-5), LoopSpan::of_fraction(0.1 + 0.2), LoopSpan::layers(4, 9), LoopSpan::layers(5, 5)})
    CHECK(parse_loop_span(to_string(s), "s") == s);
}

TEST_CASE("a span built in code is checked as a parsed one", "[recipe]") {
  // 1.5 x 12 = 18 layers of 12; NaN would reach an integer cast.
  CHECK(errors_of({.span = LoopSpan::of_fraction(1.5)}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"1.5\": a fraction must lie in [0, 1]"});
  CHECK(errors_of({.span = LoopSpan::of_fraction(std::nan(""))}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"nan\": a fraction must lie in [0, 1]"});
  CHECK(errors_of({.span = LoopSpan::layers(0, 3)}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"0-3\": must satisfy 1 <= first <= last <= 12 (the layers)"});
  // 0.3 x 10 = 3 layers, centred: floor((10 - 3) / 2) = 3 before them: layers 4-6.
  const LoopConfig l = resolve_loop({.span = LoopSpan::of_fraction(0.3)}, 10);
  CHECK(format_span(l) == "4-6");
}
