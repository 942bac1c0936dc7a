// Relaxations, computed (docs/solver.md section 8): when the best misses the
// tolerance, each single relaxation is solved again and listed best first.
#include <catch2/catch.hpp>

#include <string>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "solve/relax.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

using test::example;

// The 200M, 192-expert cell of the paper's table (examples/paper/) at the
// paper's Baseline alignments, its attention pinned so that the list does not
// move with the attention defaults: 10 query heads, 1 or 2 KV heads, head_dim
// 32..128, any attention width.
SearchSpace pinned_space() {
  SearchSpace s;
  s.align_hidden = 8;
  s.align_experts = 8;
  s.align_head_dim = 8;
  s.heads = KnobRange{10, 10};
  s.kv_heads = KnobRange{1, 2};
  s.head_dim = KnobRange{32, 128};
  s.attention_ratio = {0.1, 10.0};
  return s;
}

std::string changes_of(const Relaxation& r) {
  std::string out;
  for (const FieldChange& c : r.changes) out += (out.empty() ? "" : ", ") + c.field + " = " + c.value;
  return out;
}

}  // namespace

TEST_CASE("the relaxations of a Baseline the space misses are solved and sorted best first", "[solve][relax]") {
  const ModelConfig b = example("paper/paper-200m-e192-kv2x128.json");
  const SearchSpace s = pinned_space();
  const MatchResult r = solve(b, {}, s);
  REQUIRE_FALSE(r.within_tolerance);
  // KV target: 2 x 128 x 12 executed layers over 18 = 2 x 85.33 per layer;
  // head_dim multiple of 8: 2 x 88 x 18 = 3168 against 3072, +3.125%.
  CHECK(r.candidates.front().max_abs_mismatch_pct == 3.125);
  std::string listed;
  for (const Relaxation& x : r.relaxations)
    listed += changes_of(x) + " reaches " + std::to_string(x.max_abs_mismatch_pct) + "\n";
  INFO(listed);
  // What each reaches (the attention ones move with the attention defaults,
  // so they are looked up, not placed).
  const auto reaches = [&](const std::string& changes) {
    for (const Relaxation& x : r.relaxations)
      if (changes_of(x) == changes) return x.max_abs_mismatch_pct;
    FAIL("no relaxation " << changes);
    return -1.0;
  };
  REQUIRE(r.relaxations.size() == 11);
  CHECK(changes_of(r.relaxations[0]) == "LoopRecipe::span = full");
  CHECK(changes_of(r.relaxations[1]) == "SearchSpace::align_head_dim = 4");
  CHECK(reaches("LoopRecipe::span = 0.25") == 1.5625);
  CHECK(reaches("LoopRecipe::span = 0.75") == 1.5625);
  // A finer H or E alignment leaves 2 x 88 the KV geometry nearest the target.
  CHECK(reaches("SearchSpace::align_hidden = 4") == 3.125);
  CHECK(reaches("SearchSpace::align_experts = 4") == 3.125);
  CHECK(reaches("SearchSpace::ffn = searched") == 3.125);
  // A pinned head_dim is dropped (not min_head_dim halved); freeing pinned heads sets free_heads too.
  CHECK(reaches("SearchSpace::head_dim = default") <= 3.125);
  CHECK(reaches("SearchSpace::kv_heads = default") <= 3.125);
  CHECK(reaches("SearchSpace::heads = default") <= 3.125);
  CHECK(reaches("SearchSpace::attention_ratio = 0.05:20") <= 3.125);
  for (std::size_t i = 1; i < r.relaxations.size(); ++i)
    CHECK(r.relaxations[i - 1].max_abs_mismatch_pct <= r.relaxations[i].max_abs_mismatch_pct);

  // Looping every layer twice: 24 executed layers, so 1 KV head x 128 matches
  // the KV cache exactly (128 x 24 = 2 x 128 x 12); the value is the relaxed
  // space's own answer.
  const Relaxation& full = r.relaxations[0];
  LoopRecipe every;
  every.span = LoopSpan::full();
  const MatchResult direct = solve(b, every, s, {.top = 1, .relaxations = false});
  CHECK(full.solved);
  CHECK(full.within_tolerance);
  CHECK(full.max_abs_mismatch_pct == direct.candidates.front().max_abs_mismatch_pct);
  CHECK(full.max_abs_mismatch_pct == Approx(0.695).margin(5e-4));
  CHECK(full.knobs == direct.candidates.front().knobs);
  CHECK(full.knobs.kv_heads == 1);
  CHECK(full.knobs.head_dim == 128);

  // head_dim multiple of 4, by hand: with 1 or 2 KV heads and head_dim <= 128,
  // kv x head_dim must approach 2 x 128 x 12 / 18 = 170.67. 2 x 84 x 18 = 3024,
  // 100 x (3024 - 3072) / 3072 = -1.5625%; 2 x 88 is +3.125%, 1 x 128 is -25%.
  // So no candidate beats 1.5625%, and one with FLOPs and parameters inside it reaches it.
  const Relaxation& align4 = r.relaxations[1];
  CHECK(align4.max_abs_mismatch_pct == 1.5625);
  CHECK_FALSE(align4.within_tolerance);
  CHECK(align4.knobs.kv_heads == 2);
  CHECK(align4.knobs.head_dim == 84);
  // A quarter of the layers looped (3 of 12): 15 executed, 2 x 104 x 15 = 3120,
  // +1.5625% too: the tie keeps the fixed order, the alignment before the span.
  CHECK(r.relaxations[2].max_abs_mismatch_pct == 1.5625);
}

// A tolerance of 0 misses whatever the defaults: no candidate matches exactly.
TEST_CASE("a result within the tolerance, or with relaxations off, lists none", "[solve][relax]") {
  const MatchResult within = solve(example("smelt-baseline-54b.json"), {});
  CHECK(within.within_tolerance);
  CHECK(within.relaxations.empty());
  const MatchResult off = solve(example("smelt-baseline-12l.json"), {}, {}, {.tolerance_pct = 0, .relaxations = false});
  CHECK_FALSE(off.within_tolerance);
  CHECK(off.relaxations.empty());
  const MatchResult on = solve(example("smelt-baseline-12l.json"), {}, {}, {.tolerance_pct = 0});
  CHECK_FALSE(on.relaxations.empty());
}

TEST_CASE("brute force lists the same relaxations as the solver", "[solve][relax]") {
  const ModelConfig b = example("paper/paper-200m-e8-kv2x128.json");
  SearchSpace s = pinned_space();
  s.hidden = KnobRange{960, 1040};
  s.experts = KnobRange{8, 24};
  const MatchResult fast = solve(b, {}, s, {.top = 1});
  const MatchResult slow = solve_brute_force(b, {}, s, {.top = 1});
  REQUIRE_FALSE(fast.relaxations.empty());
  REQUIRE(fast.relaxations.size() == slow.relaxations.size());
  for (std::size_t i = 0; i < fast.relaxations.size(); ++i) {
    INFO(changes_of(fast.relaxations[i]));
    CHECK(fast.relaxations[i].changes == slow.relaxations[i].changes);
    CHECK(fast.relaxations[i].max_abs_mismatch_pct == slow.relaxations[i].max_abs_mismatch_pct);
    CHECK(fast.relaxations[i].knobs == slow.relaxations[i].knobs);
  }
}

namespace {

// Refuses the space with align_hidden 32, solves the others.
MatchResult refusing_solver(const CheckedConfig& b, const LoopRecipe& r, const SearchSpace& s, const MatchOptions& o) {
  if (s.align_hidden == 32)
    throw config_error({Violation("SearchSpace::align_hidden", "32", "refused"), Violation("and a second reason")});
  return solve(b, r, s, o);
}

}  // namespace

TEST_CASE("a relaxation whose space is refused is listed last with its reasons", "[solve][relax]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  MatchOptions o;
  o.tolerance_pct = 0;
  o.relaxations = false;
  const MatchResult missed = solve(b, {}, {}, o);
  o.relaxations = true;
  const MatchResult r = solve_detail::with_relaxations(missed, CheckedConfig(b), {}, {}, o, refusing_solver);
  REQUIRE(r.relaxations.size() >= 2);
  const Relaxation& last = r.relaxations.back();
  CHECK(changes_of(last) == "SearchSpace::align_hidden = 32");
  CHECK_FALSE(last.solved);
  CHECK_FALSE(last.within_tolerance);
  CHECK(last.error == "SearchSpace::align_hidden = 32: refused; and a second reason");
  // The same reasons kept as violations, each with its field, for a caller to name its own way.
  CHECK(last.violations == std::vector<Violation>{Violation("SearchSpace::align_hidden", "32", "refused"),
                                                  Violation("and a second reason")});
  for (std::size_t i = 0; i + 1 < r.relaxations.size(); ++i) CHECK(r.relaxations[i].solved);
}

TEST_CASE("only the relaxations that apply are tried", "[solve][relax]") {
  // An MLA Baseline keeps its attention: no head_dim, KV-head, query-head or
  // attention-width relaxation.
  const MatchResult mla = solve(example("deepseek-v3-mla.json"), {}, {}, {.top = 1});
  REQUIRE_FALSE(mla.within_tolerance);
  for (const Relaxation& x : mla.relaxations)
    for (const FieldChange& c : x.changes) {
      INFO(c.field);
      CHECK(c.field != "SearchSpace::align_head_dim");
      CHECK(c.field != "SearchSpace::min_head_dim");
      CHECK(c.field != "SearchSpace::free_heads");
      CHECK(c.field != "SearchSpace::attention_ratio");
    }
  // Alignments of 1 have no finer value; the expert width searched brings align_ffn.
  SearchSpace s;
  s.align_hidden = 1;
  s.align_experts = 1;
  s.align_head_dim = 1;
  s.hidden = KnobRange{1000, 1030};
  s.ffn = FfnScaling::searched;
  s.expert_width = KnobRange{240, 272};
  s.free_heads = false;  // given: the test is about which relaxations apply, not about the default
  const MatchResult r = solve(example("smelt-baseline-12l.json"), {}, s, {.tolerance_pct = 0, .top = 1});
  REQUIRE_FALSE(r.within_tolerance);
  std::vector<std::string> fields;
  for (const Relaxation& x : r.relaxations) fields.push_back(x.changes.front().field);
  std::sort(fields.begin(), fields.end());
  CHECK(fields == std::vector<std::string>{"LoopRecipe::span", "LoopRecipe::span", "LoopRecipe::span",
                                           "SearchSpace::align_ffn", "SearchSpace::attention_ratio",
                                           "SearchSpace::free_heads", "SearchSpace::min_head_dim"});
}
