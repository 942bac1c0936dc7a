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

TEST_CASE("library names become flags, whole names only, values and other text kept", "[cli][errors]") {
  CHECK(to_flags("SearchSpace::align_hidden = 0: must be positive") == "--align-hidden = 0: must be positive");
  CHECK(to_flags("SearchSpace::head_dim = 16: must allow a head_dim of at least SearchSpace::min_head_dim = 32") ==
        "--head-dim = 16: must allow a head_dim of at least --min-head-dim = 32");
  CHECK(to_flags("SearchSpace::heads, SearchSpace::head_dim") == "--heads, --head-dim");
  CHECK(to_flags("SearchSpace::heads_x = 1") == "SearchSpace::heads_x = 1");  // not a name in the table
  CHECK(to_flags("MatchOptions::contexts = 0: must be between 1 and 1073741824") ==
        "--context = 0: must be between 1 and 1073741824");
  CHECK(to_flags("(use SweepOptions::depths = [])") == "(use --depths none)");
  CHECK(to_flags("match without it (MatchOptions::match = flops,params)") == "match without it (--match flops,params)");
  CHECK(to_flags("use fewer BenchOptions::tokens or BenchOptions::force") == "use fewer --tokens or --force");
  CHECK(to_flags("attention.num_heads = 0: must be positive") == "attention.num_heads = 0: must be positive");
}

TEST_CASE(
    "a config_error prints each violation in flag names, a cuda_error its text in flag names, other errors their "
    "what()",
    "[cli][errors]") {
  CHECK(describe(config_error({Violation("LoopRecipe::loops", "0", "must be at least 1"),
                               Violation("BenchOptions::tokens", "-4", "must be positive")})) ==
        "--loops = 0: must be at least 1\n--tokens = -4: must be positive");
  CHECK(describe(io_error("cannot read 'LoopRecipe::span'")) == "cannot read 'LoopRecipe::span'");
  CHECK(describe(cuda_error("BenchOptions::backend = \"cuda\": unavailable: no CUDA device found")) ==
        "--backend = \"cuda\": unavailable: no CUDA device found");
}
