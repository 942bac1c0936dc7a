// smelt-match's one mapping of library errors to exit codes, and its one table
// of library names to flags.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "exit_codes.hpp"
#include "flag_names.hpp"
#include "smelt/error.hpp"
#include "smelt/scaling.hpp"
#include "util/checked.hpp"
#include "util/mention.hpp"

using namespace smelt;
using namespace smelt::cli;

TEST_CASE("each error kind has its own exit code, and a plain smelt::error is a bug", "[cli][errors]") {
  CHECK(exit_code_of(config_error(Violation("a", "1", "must be even"))) == kBadInput);
  CHECK(exit_code_of(overflow_error(Violation("x overflows 64-bit integers"))) == kBadInput);
  CHECK(exit_code_of(detail::overflow("device bytes")) == kBadInput);  // was outside smelt::error: exit 1
  CHECK(exit_code_of(infeasible_error("no law")) == kInfeasible);
  CHECK(exit_code_of(io_error("cannot read 'x'")) == kIo);
  CHECK(exit_code_of(cuda_error("cudaMalloc failed")) == kCuda);
  CHECK(exit_code_of(smelt::error("LayerRunner: no weights for layer 3")) == kInternal);
}

TEST_CASE("a fit that converges from no start has no answer: infeasible, exit code 3", "[cli][errors]") {
  std::vector<Run> runs;
  for (int i = 0; i < 8; ++i) {
    const double n = 1e8 * (i + 1), d = 2e9 * (i + 1);
    runs.push_back({.n = n, .d = d, .loss = 1.8 + 400 / std::pow(n, 0.34) + 410 / std::pow(d, 0.28)});
  }
  FitOptions options;
  options.max_iterations = 1;  // no start meets the convergence criterion in one iteration
  try {
    (void)fit_law(runs, LawForm::chinchilla, options);
    FAIL("no throw");
  } catch (const smelt::error& e) {
    CHECK(exit_code_of(e) == kInfeasible);
    CHECK_THAT(e.what(), Catch::Contains("the chinchilla fit did not converge from any of 4500 starts"));
  }
}

TEST_CASE("library fields become flags by lookup: a violation's field and the fields its rule mentions",
          "[cli][errors]") {
  CHECK(flag_of_field("SearchSpace::align_hidden") == "--align-hidden");
  CHECK(flag_of_field("SearchSpace::heads, SearchSpace::head_dim") == "--heads, --head-dim");
  CHECK(flag_of_field("SearchSpace::heads_x") == "SearchSpace::heads_x");  // no row of a table
  CHECK(flag_of_field("  MatchOptions::contexts") == "  --context");       // indented by throw_within
  CHECK(flag_of_field("attention.num_heads") == "attention.num_heads");    // a config's field, not an option
  CHECK(flag_of_field("export_hf::family") == "--family");
  CHECK(flag_of({0, 0, "SweepOptions::depths", "[]"}) == "--depths none");
  CHECK(flag_of({0, 0, "MatchOptions::match", "flops,params"}) == "--match flops,params");
  CHECK(flag_of({0, 0, "SearchSpace::free_heads", "false"}) == "--keep-heads");
  CHECK(flag_of({0, 0, "SearchSpace::min_head_dim", "32"}) == "--min-head-dim = 32");
  CHECK(flag_of({0, 0, "BenchOptions::force", ""}) == "--force");
  // The library marks a mention where it writes the rule; the error keeps the plain rule and where the name lies:
  // "must allow a head_dim of at least " is 34 bytes, "SearchSpace::min_head_dim = 32" 25 + 5 = 30.
  const config_error e(
      Violation("SearchSpace::head_dim", "16",
                "must allow a head_dim of at least " + detail::mention("SearchSpace::min_head_dim", "32") + " here"));
  const Violation& v = e.violations()[0];
  CHECK(v.rule == "must allow a head_dim of at least SearchSpace::min_head_dim = 32 here");
  CHECK(v.mentions == std::vector<FieldMention>{{34, 30, "SearchSpace::min_head_dim", "32"}});
  CHECK(std::string(e.what()) == "SearchSpace::head_dim = 16: " + v.rule);
  CHECK(shown(v) == "--head-dim = 16: must allow a head_dim of at least --min-head-dim = 32 here");
  // A name that is only text, not a mention, is not looked for.
  CHECK(shown(Violation("SearchSpace::heads", "1", "not SearchSpace::align_hidden")) ==
        "--heads = 1: not SearchSpace::align_hidden");
  CHECK(shown(Violation("attention.num_heads", "0", "must be positive")) ==
        "attention.num_heads = 0: must be positive");
}

TEST_CASE(
    "a config_error prints each violation in flag names, a cuda_error its violation in flag names, other errors "
    "their "
    "what()",
    "[cli][errors]") {
  CHECK(describe(config_error({Violation("LoopRecipe::loops", "0", "must be at least 1"),
                               Violation("BenchOptions::tokens", "-4", "must be positive")})) ==
        "--loops = 0: must be at least 1\n--tokens = -4: must be positive");
  CHECK(describe(io_error("cannot read 'LoopRecipe::span'")) == "cannot read 'LoopRecipe::span'");
  CHECK(describe(cuda_error(Violation("BenchOptions::backend", "\"cuda\"", "unavailable: no CUDA device found"))) ==
        "--backend = \"cuda\": unavailable: no CUDA device found");
  CHECK(describe(cuda_error("cudaMalloc failed")) == "cudaMalloc failed");
}
