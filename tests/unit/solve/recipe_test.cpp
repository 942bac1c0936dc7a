// Loop recipes: the paper's spans and every way to ask for a bad one.
#include <catch2/catch.hpp>

#include "smelt/error.hpp"
#include "smelt/recipe.hpp"

using namespace smelt;

namespace {
std::string span_of(const std::string& span, std::int64_t layers, std::int64_t loops = 2) {
  const LoopConfig l = resolve_loop({.span = span, .loops = loops}, layers);
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
  CHECK(errors_of({.span = "4-19", .loops = 0}, 12) ==
        std::vector<std::string>{"LoopRecipe::loops = 0: must be at least 1",
                                 "LoopRecipe::span = \"4-19\": must satisfy 1 <= first <= last <= 12 (the layers)"});
  CHECK(errors_of({.span = "1.5"}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"1.5\": a fraction must lie in [0, 1]"});
  CHECK(
      errors_of({.span = "middle"}, 12) ==
      std::vector<std::string>{"LoopRecipe::span = \"middle\": must be middle-half, full, a fraction (0.25 or 25%) or "
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
  CHECK(errors_of({.span = "nan%"}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"nan%\": a fraction must lie in [0, 1]"});
  CHECK(errors_of({.span = "nan"}, 12) ==
        std::vector<std::string>{
            "LoopRecipe::span = \"nan\": must be middle-half, full, a fraction (0.25 or 25%) or 1-based "
            "layers such as \"4-9\""});
  CHECK(errors_of({.span = "inf%"}, 12) ==
        std::vector<std::string>{"LoopRecipe::span = \"inf%\": a fraction must lie in [0, 1]"});
}
