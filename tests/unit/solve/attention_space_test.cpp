// The attention shape rules (docs/solver.md section 4): query heads free, KV
// heads any divisor, head_dim up to max_head_dim, the width ratio to H; a known
// answer on a paper Baseline, the hidden sizes each geometry pairs with, and
// every bad value named with its field and rule.
#include <catch2/catch.hpp>

#include <limits>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "solve/attention_space.hpp"
#include "solve/space.hpp"
#include "solve_test_helpers.hpp"
#include "test_configs.hpp"

using namespace smelt;
using i64 = std::int64_t;

namespace {

using test::paper_200m;

using test::space_errors;

// The paper's alignment freedom (H and E multiples of 8, head_dim of 4), the
// expert width searched, every other knob in its default domain.
const SearchSpace kPaperSpace{.align_hidden = 8, .align_experts = 8, .align_head_dim = 4, .ffn = FfnScaling::searched};

}  // namespace

TEST_CASE("KV geometry as a product: the paper's 200M E8 cell reaches +0.78% KV", "[solve][attention]") {
  const ModelConfig b = paper_200m();  // 12 layers, H 1280, 10 x 128 queries, 2 x 128 KV, 8 experts of 320, top-8
  // The middle half looped twice executes 18 layers: the KV target per layer is
  // 2 x 128 x 12/18 = 170.67 elements. KV heads may be any divisor of the query
  // heads and head_dim any multiple of 4, so every product kv x d that is a
  // multiple of 4 is reachable (1 x d); the nearest are 168 (-1.5625%) and 172
  // (+0.78125%). The old box (KV heads <= 2, head_dim <= 128) reached only
  // 2 x 84 = 168 and 2 x 88 = 176 (+3.125%).
  const MatchResult kv_only = solve(b, {}, kPaperSpace, {.match = {Budget::kv}});
  CHECK(kv_only.candidates.front().max_abs_mismatch_pct == 0.78125);

  const MatchResult r = solve(b, {}, kPaperSpace);
  const Candidate& c = r.candidates.front();
  CHECK(c.knobs == Knobs{648, 16, 7, 1, 172, 384, 0, 0});
  const BudgetsAt& at = c.budgets.front();
  // KV: 2 x 1 x 172 x 2 bytes x 18 = 12,384 against 2 x 2 x 128 x 2 x 12 = 12,288: +0.78125%.
  CHECK(at.kv.candidate == 12'384);
  CHECK(at.kv.mismatch_pct == 0.78125);
  // Width rule: 7 x 172 = 1204 queries over H 648 = 1.858, inside [0.5, 2].
  // Parameters per layer: attention 648*1204 + 2*648*172 + 1204*648 = 1,783,296,
  // norms 2*648 = 1,296, router 648*16 = 10,368, experts 16*3*648*384 =
  // 11,943,936: 13,738,896; x 12 + 648 = 164,867,400 against 165,305,600 (-0.2651%).
  CHECK(at.params.candidate == 164'867'400);
  CHECK(at.params.mismatch_pct == Approx(-0.265085).margin(5e-6));
  // FLOPs per token (mean context 2048.5, 18 executed layers): 2 x (1,783,296 +
  // 10,368 + 8*3*648*384) = 15,531,264 matmul + 4 x 1204 x 2048.5 = 9,865,576
  // attention: 25,396,840 x 18 = 457,143,120 against 456,407,040 (+0.1613%).
  CHECK(at.flops.candidate == 457'143'120);
  CHECK(at.flops.mismatch_pct == Approx(0.161277).margin(5e-6));
  CHECK(c.max_abs_mismatch_pct == 0.78125);
  CHECK(r.within_tolerance);
  // Every candidate keeps its attention width within [0.5, 2] x H.
  for (const Candidate& k : r.candidates) {
    CHECK(2 * k.knobs.heads * k.knobs.head_dim >= k.knobs.hidden);
    CHECK(k.knobs.heads * k.knobs.head_dim <= 2 * k.knobs.hidden);
  }
}

TEST_CASE("each geometry pairs with the hidden sizes its width ratio allows", "[solve][attention]") {
  const ModelConfig b = test::tiny_moe();  // H 64, 4 x 16 queries: ratio 1
  const SearchSpace s{.hidden = KnobRange{16, 128}, .align_hidden = 16};
  const solve_detail::Plan plan = solve_detail::make_plan(CheckedConfig(b), {}, s, {});
  // Width 4 x 32 = 128 pairs with H in [128 / 2, 128 / 0.5] = [64, 256]:
  // 64, 80, 96, 112, 128 of the listed 16..128 (indices 3 to 7).
  const solve_detail::IndexSpan span = solve_detail::hidden_span(plan, {4, 2, 32});
  CHECK(plan.hidden[span.lo] == 64);
  CHECK(span.hi == plan.hidden.size());
  CHECK(span.hi - span.lo == 5);
  // Width 1 x 32 = 32: H in [16, 64]: 16, 32, 48, 64.
  const solve_detail::IndexSpan narrow = solve_detail::hidden_span(plan, {1, 1, 32});
  CHECK(narrow.lo == 0);
  CHECK(plan.hidden[narrow.hi - 1] == 64);
  // An exact bound: 0.7 is 7/10, so width 7 x 128 = 896 fits H 1280 at a ratio of exactly 0.7
  // (the double 0.7 times 1280 is 895.99999999999994).
  const solve_detail::WidthRule rule = solve_detail::width_rule(b, {.attention_ratio = {0.7, 0.7}});
  const solve_detail::HiddenBounds at_896 = solve_detail::hidden_bounds(rule, 896);
  CHECK(at_896.lo == 1280);
  CHECK(at_896.hi == 1280);
  const solve_detail::HiddenBounds at_895 = solve_detail::hidden_bounds(rule, 895);
  CHECK(at_895.lo > at_895.hi);
}

TEST_CASE("the default width range and head_dim cap widen to hold the Baseline's own geometry", "[solve][attention]") {
  // A Baseline of 4 x 128 queries at H 64 (ratio 8) and head_dim 512 > 256.
  ModelConfig b = test::tiny_moe();
  b.attention.head_dim = 512;
  b.loops = {};
  const solve_detail::WidthRule rule = solve_detail::width_rule(b, {});
  CHECK(rule.lo.num * 2 == rule.lo.den);  // 0.5
  CHECK(rule.hi.num == 4 * 512);          // 2048 / 64 = 32
  CHECK(rule.hi.den == 64);
  // Its own geometry is a candidate: unlooped (one pass), H 64 and 4/2/512 is the Baseline.
  const MatchResult r = solve(b, {.loops = 1}, {});
  CHECK(r.candidates.front().max_abs_mismatch_pct == 0);
  CHECK(r.candidates.front().knobs.head_dim == 512);
  // A range the caller set is kept as given: [0.5, 2] leaves 4 x 512 out.
  const solve_detail::WidthRule asked = solve_detail::width_rule(b, {.attention_ratio = {0.5, 1.5}});
  CHECK(asked.hi.num * 2 == asked.hi.den * 3);
}

TEST_CASE("bad shape-rule values name the field, the value and the rule, all at once", "[solve][attention]") {
  const ModelConfig b = paper_200m();
  CHECK(
      space_errors(b, {.max_head_dim = 16, .attention_ratio = {2, 0.5}}) ==
      std::vector<std::string>{"SearchSpace::max_head_dim = 16: must be at least SearchSpace::min_head_dim = 32",
                               "SearchSpace::attention_ratio = 2:0.5: must be a ratio or a range LO:HI with LO <= HI"});
  CHECK(space_errors(b, {.max_head_dim = 0, .attention_ratio = {0, 2}}) ==
        std::vector<std::string>{
            "SearchSpace::max_head_dim = 0: must be positive",
            "SearchSpace::attention_ratio = 0:2: LO must be positive: it bounds query heads x head_dim over H"});
  CHECK(space_errors(
            b, {.max_head_dim = i64{1} << 25, .attention_ratio = {0.5, std::numeric_limits<double>::infinity()}}) ==
        std::vector<std::string>{"SearchSpace::max_head_dim = 33554432: must be at most 16777216",
                                 "SearchSpace::attention_ratio = 0.5:inf: LO and HI must be finite ratios"});
  CHECK(space_errors(b, {.attention_ratio = {1e-7, 2}}) ==
        std::vector<std::string>{
            "SearchSpace::attention_ratio = 1e-07:2: LO and HI must lie between 0.000001 and 1000000"});
  // head_dim above 256 pinned with a rule that forbids it, and pinned query
  // heads with the Baseline's kept: both at once.
  CHECK(space_errors(b, {.head_dim = KnobRange{512, 512}, .heads = KnobRange{12, 12}, .free_heads = false}) ==
        std::vector<std::string>{
            "SearchSpace::head_dim = 512: must be at most SearchSpace::max_head_dim = 256 (FlashAttention's largest "
            "head size)",
            "SearchSpace::heads = 12: contradicts SearchSpace::free_heads = false, which keeps the Baseline's 10 query "
            "heads"});
  // An empty space says which constraints emptied it: 2 x 32..64 = 64..128
  // queries never reach half of the smallest H (320).
  CHECK(space_errors(b, {.head_dim = KnobRange{32, 64}, .heads = KnobRange{2, 2}}) ==
        std::vector<std::string>{
            "SearchSpace::attention_ratio = 0.5:2: no attention geometry fits: query heads 2 (SearchSpace::heads) x "
            "head_dim 32:64 (SearchSpace::head_dim) never give a width between 0.5 x 320 and 2 x 1280 (the ratio's "
            "ends at the ends of SearchSpace::hidden)"});
  // Widths in [0.5 x 320, 2 x 1280], yet none equal to a multiple of 64: at a
  // ratio of exactly 1, 10 x (100..124 in steps of 4) = 1000..1240 is never an H.
  CHECK(space_errors(b, {.head_dim = KnobRange{100, 124},
                         .heads = KnobRange{10, 10},
                         .align_head_dim = 4,
                         .attention_ratio = {1, 1}}) ==
        std::vector<std::string>{
            "SearchSpace::attention_ratio = 1: no attention geometry fits: the widths query heads x head_dim that the "
            "ranges allow lie within [1, 1] x H of no hidden size of SearchSpace::hidden (multiples of "
            "SearchSpace::align_hidden = 64 from 320 to 1280)"});
}

TEST_CASE("an MLA Baseline keeps its attention under the default free heads", "[solve][attention]") {
  const ModelConfig b = read_config(std::string(SMELT_SOURCE_DIR "/examples/deepseek-v3-mla.json"));
  const MatchResult r = solve(b, {}, {});
  CHECK(r.candidates.front().knobs.heads == b.attention.num_heads);
  CHECK(r.candidates.front().knobs.head_dim == b.attention.head_dim);
  CHECK(space_errors(b, {.heads = KnobRange{64, 64}}) ==
        std::vector<std::string>{"SearchSpace::head_dim, SearchSpace::kv_heads, SearchSpace::heads: not supported for "
                                 "an MLA Baseline (its attention is kept as it is)"});
}

TEST_CASE("free_heads = false keeps the Baseline's query heads, KV heads any divisor of them", "[solve][attention]") {
  const ModelConfig b = paper_200m();  // 10 query heads: KV heads 1, 2, 5 or 10
  const MatchResult r = solve(b, {}, {.free_heads = false}, {.top = 5});
  for (const Candidate& c : r.candidates) {
    CHECK(c.knobs.heads == 10);
    CHECK(10 % c.knobs.kv_heads == 0);
  }
  // The best keeps 2 x 88 (KV 176 against 170.67: +3.125%) and misses most on
  // parameters (+7.177%, 16 experts at H 1024), where the free heads reach 0.781%.
  CHECK(r.candidates.front().knobs.kv_heads == 2);
  CHECK(r.candidates.front().knobs.head_dim == 88);
  CHECK(r.candidates.front().budgets.front().kv.mismatch_pct == 3.125);
  CHECK(r.candidates.front().max_abs_mismatch_pct == Approx(7.177).margin(5e-4));
}
