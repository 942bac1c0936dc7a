// The solver on real questions: known answers, the objective and tie-break,
// tolerance and its explanations, and every bad option.
#include <catch2/catch.hpp>

#include <cmath>

#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "smelt/hardware.hpp"
#include "smelt/solve.hpp"
#include "solve/exact_budget.hpp"
#include "solve/time_budget.hpp"
#include "solve_test_helpers.hpp"
#include "test_configs.hpp"

using namespace smelt;
using i64 = std::int64_t;

namespace {
using test::example;

std::vector<std::string> errors_of(const ModelConfig& b, const LoopRecipe& r, const SearchSpace& s,
                                   const MatchOptions& o = {}) {
  return test::solve_errors(b, r, s, o);
}

double pct(double candidate, double baseline) { return 100.0 * (candidate - baseline) / baseline; }
}  // namespace

TEST_CASE("exact fractions compare without rounding or overflow", "[solve]") {
  using solve_detail::compare;
  using solve_detail::Fraction;
  using solve_detail::i128;
  CHECK(compare(Fraction{1, 3}, Fraction{34, 100}) < 0);
  CHECK(compare(Fraction{2, 4}, Fraction{1, 2}) == 0);
  CHECK(compare(Fraction{7, 2}, Fraction{3, 1}) > 0);
  CHECK(compare(Fraction{0, 5}, Fraction{0, 9}) == 0);
  // (2^100 + 1) / 2^100 against (2^100 + 2) / (2^100 + 1): both just above 1; products would overflow 128 bits.
  const i128 big = i128{1} << 100;
  CHECK(compare(Fraction{big + 1, big}, Fraction{big + 2, big + 1}) > 0);
  CHECK(compare(Fraction{big + 2, big + 1}, Fraction{big + 1, big}) < 0);
}

TEST_CASE("knobs_of reads a config's knob values, in Knobs' order", "[solve]") {
  // tiny_moe: H 64, 8 experts, 4 query heads, 2 KV heads, head_dim 16, expert 32, shared 32, dense 128.
  CHECK(knobs_of(test::tiny_moe()) == Knobs{64, 8, 4, 2, 16, 32, 32, 128});
}

TEST_CASE("without a loop the Baseline itself is the exact optimum", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const MatchResult r = solve(b, {.loops = 1});
  const Candidate& best = r.candidates.front();
  CHECK(best.max_abs_mismatch_pct == 0.0);
  CHECK(best.knobs == Knobs{1280, 192, 10, 2, 128, 320, 0, 0});
  CHECK(knobs_of(r.baseline) == best.knobs);  // the table's Baseline column (cli/derive.cpp)
  CHECK(r.within_tolerance);
  CHECK(r.why.empty());
}

TEST_CASE("span keep: a looped Baseline's own spans and extras stay, and it is its own exact optimum", "[solve]") {
  // Ouro-1.4B's whole-stack loop with its gate and sandwich norms, shrunk to a quick search; and two spans.
  for (const char* file : {"hf/ouro-1.4b.json", "loops/block-repeat-two-spans.json"}) {
    INFO(file);
    ModelConfig b = example(file);
    const MatchResult r = solve(b, {.span = LoopSpan::keep()});
    const Candidate& best = r.candidates.front();
    CHECK(best.config.loops == b.loops);
    CHECK(best.max_abs_mismatch_pct == 0.0);
    CHECK(r.loop == b.loops.front());  // the report's recipe names the first kept span
  }
  ModelConfig ouro = example("hf/ouro-1.4b.json");
  CHECK(errors_of(ouro, {.span = LoopSpan::keep(), .depth = 12}, {}) ==
        std::vector<std::string>{"LoopRecipe::depth = 12: must stay the Baseline's 24 with LoopRecipe::span = "
                                 "\"keep\" (its spans name its layers)"});
  // Without keep the recipe's loop replaces the Baseline's (and with it the per-pass gate).
  const MatchResult replaced = solve(ouro, {.span = LoopSpan::middle_half()});
  CHECK(replaced.candidates.front().config.loops == std::vector<LoopConfig>{{7, 18, 2, 0.5}});
}

TEST_CASE("the 54B-class example matches all three budgets within 0.54%", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {});
  const Candidate& best = r.candidates.front();
  CHECK(best.knobs == Knobs{1920, 488, 24, 6, 64, 640, 0, 0});
  CHECK(r.loop.first == 8);
  CHECK(r.loop.last == 22);
  CHECK(best.executed_layers == 45);
  // KV: 30 layers x 2 x 6 x 96 x 2 bytes = 69,120 = 45 visits x 2 x 6 x 64 x 2: exact.
  CHECK(best.budgets[0].kv.baseline == 69120);
  CHECK(best.budgets[0].kv.candidate == 69120);
  // The other two agree with count() of both configs.
  const CostReport base = count(b);
  const CostReport derived = count(best.config);
  CHECK(best.budgets[0].flops.mismatch_pct ==
        Approx(pct(derived.flops.forward_non_embedding(), base.flops.forward_non_embedding())).epsilon(1e-9));
  CHECK(best.budgets[0].params.mismatch_pct ==
        Approx(pct(static_cast<double>(derived.params.non_embedding), static_cast<double>(base.params.non_embedding)))
            .epsilon(1e-9));
  CHECK(best.max_abs_mismatch_pct == Approx(0.534).margin(0.001));
  CHECK(r.within_tolerance);
  CHECK(r.candidates.size() == 5);
  // Memory and work stay far below the space. The default attention domain
  // (query heads free, KV heads any divisor, head_dim 32..256 in steps of 8,
  // width q x d within [0.5 H, 2 H] for H in 576..2304) holds 5,255 geometries
  // paired with 71,532 (geometry, H) pairs, x 336 expert counts (8..2688):
  // 24,034,752 candidates; the search counts each geometry once to rank it,
  // and visits few of them.
  CHECK(r.space_size == 71532 * 336);
  CHECK(r.evaluated < 5255 + 2000);
}

TEST_CASE("a Baseline the space cannot match within 1% exits with reasons", "[solve]") {
  const MatchResult r = solve(example("smelt-baseline-12l.json"), {});
  CHECK_FALSE(r.within_tolerance);
  const Candidate& best = r.candidates.front();
  // KV target per executed layer: 2 KV heads x 128 x 12/18 = 170.67 elements.
  // KV heads any divisor of the query heads, head_dim a multiple of 8: the
  // products kv x d nearest it are 168 (3 x 56, 1 x 168: -1.5625%) and 176
  // (2 x 88, 1 x 176: +3.125%); 168 x 18 = 3,024 against 256 x 12 = 3,072.
  // Among the candidates at -1.5625%, 12 query heads (closest to the
  // Baseline's 10) with 3 x 56; width 12 x 56 = 672 = 0.583 x 1152, inside [0.5, 2].
  CHECK(best.knobs == Knobs{1152, 240, 12, 3, 56, 288, 0, 0});
  CHECK(best.budgets[0].kv.mismatch_pct == -1.5625);
  CHECK(best.max_abs_mismatch_pct == 1.5625);
  REQUIRE(r.why.size() == 1);
  CHECK(r.why[0].text ==
        "kv_bytes_per_token: -1.56% misses the 1% tolerance (the largest mismatch): KV cache moves in steps of 14.1% "
        "here (head_dim multiple of 8 with 3 KV heads)");
}

TEST_CASE("matching parameters alone minimises the parameter mismatch alone", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  const MatchResult r = solve(b, {}, {}, {.match = {Budget::params}});
  const Candidate& best = r.candidates.front();
  CHECK(best.max_abs_mismatch_pct == Approx(std::fabs(best.budgets[0].params.mismatch_pct)));
  CHECK(std::fabs(best.budgets[0].params.mismatch_pct) < 0.05);
}

TEST_CASE("several contexts are matched jointly and reported each", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {}, {}, {.contexts = {4096, 32768}});
  const Candidate& best = r.candidates.front();
  REQUIRE(best.budgets.size() == 2);
  CHECK(best.budgets[1].context == 32768);
  double worst = 0;
  for (const auto& at : best.budgets)
    for (double m : {at.flops.mismatch_pct, at.params.mismatch_pct, at.kv.mismatch_pct})
      worst = std::max(worst, std::fabs(m));
  CHECK(best.max_abs_mismatch_pct == Approx(worst));
}

TEST_CASE("FLOPs with the head is a different budget", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  const MatchResult r = solve(b, {}, {}, {.flops_with_head = true});
  const BudgetsAt& at = r.candidates.front().budgets[0];
  CHECK(at.flops.mismatch_pct == at.flops_with_head.mismatch_pct);
  CHECK(at.flops.baseline == count(b).flops.forward);
}

TEST_CASE("pinned knobs stay pinned", "[solve]") {
  const ModelConfig b = example("smelt-baseline-54b.json");
  SearchSpace s;
  s.hidden = KnobRange{1984, 1984};
  s.kv_heads = KnobRange{6, 6};
  const MatchResult r = solve(b, {}, s);
  for (const auto& c : r.candidates) {
    CHECK(c.knobs.hidden == 1984);
    CHECK(c.knobs.kv_heads == 6);
  }
}

TEST_CASE("fixed FFN widths keep the Baseline's expert width", "[solve]") {
  const MatchResult r = solve(example("smelt-baseline-54b.json"), {}, {.ffn = FfnScaling::fixed});
  CHECK(r.candidates.front().knobs.expert_width == 768);
}

TEST_CASE("a dense Baseline has no experts to vary", "[solve]") {
  const ModelConfig b = test::tiny_dense(4);
  const MatchResult r = solve(b, {}, {.align_hidden = 16, .align_head_dim = 4, .min_head_dim = 4});
  CHECK(r.candidates.front().knobs.experts == 0);
  CHECK(errors_of(b, {}, {.experts = KnobRange{8, 16}}) ==
        std::vector<std::string>{"SearchSpace::experts: the Baseline has no routed experts to vary"});
}

TEST_CASE("empty or contradictory spaces are errors naming the option and the rule", "[solve]") {
  const ModelConfig b = example("smelt-baseline-12l.json");
  CHECK(errors_of(b, {}, {.align_hidden = 0, .align_experts = 0}) ==
        std::vector<std::string>{"SearchSpace::align_hidden = 0: must be positive",
                                 "SearchSpace::align_experts = 0: must be positive"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{1000, 1000}}) ==
        std::vector<std::string>{"SearchSpace::hidden = 1000: must be a multiple of SearchSpace::align_hidden = 64"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{1000, 1010}}) ==
        std::vector<std::string>{
            "SearchSpace::hidden = 1000:1010: contains no multiple of SearchSpace::align_hidden = 64"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{900, 800}}) ==
        std::vector<std::string>{
            "SearchSpace::hidden = 900:800: must be a positive value or a range LO:HI with LO <= HI"});
  CHECK(errors_of(b, {}, {.experts = KnobRange{2, 7}}) ==
        std::vector<std::string>{"SearchSpace::experts = 2:7: contains no multiple of SearchSpace::align_experts = 8"});
  CHECK(errors_of(b, {}, {.experts = KnobRange{1, 7}, .align_experts = 1}) ==
        std::vector<std::string>{"SearchSpace::experts = 1:7: must allow at least top_k = 8 experts"});
  // With the Baseline's 10 query heads kept, 3 KV heads divide none; free
  // query heads (the default) take 12 or 15 instead.
  CHECK(errors_of(b, {}, {.kv_heads = KnobRange{3, 3}, .free_heads = false}) ==
        std::vector<std::string>{"SearchSpace::kv_heads = 3: contains no divisor of the query heads (10)"});
  CHECK(errors_of(b, {}, {.kv_heads = KnobRange{3, 3}}).empty());
  CHECK(errors_of(b, {.span = LoopSpan::layers(10, 14), .loops = 0}, {}) ==
        std::vector<std::string>{"LoopRecipe::loops = 0: must be at least 1",
                                 "LoopRecipe::span = \"10-14\": must satisfy 1 <= first <= last <= 12 (the layers)"});
  CHECK(errors_of(b, {}, {}, {.match = {}, .tolerance_pct = -1, .top = 0}) ==
        std::vector<std::string>{
            "MatchOptions::top = 0: must be positive", "MatchOptions::tolerance_pct = -1: must be a percentage >= 0",
            "MatchOptions::match = \"\": must name at least one of flops, params, kv, memory, time"});
  CHECK(errors_of(b, {}, {}, {.contexts = {0}}) ==
        std::vector<std::string>{"MatchOptions::contexts = 0: must be between 1 and 1073741824"});
}

TEST_CASE("every option's range is checked before any arithmetic on it", "[solve]") {
  const ModelConfig b = example("tiny-moe.json");
  // Each of these once overflowed (align_ffn x H then a division by the
  // wrapped product: SIGFPE; LO + align - 1; depth + looped layers) or was
  // undefined, before its range check.
  CHECK(errors_of(b, {}, {.align_ffn = i64{1} << 62}) ==
        std::vector<std::string>{"SearchSpace::align_ffn = 4611686018427387904: must be at most 16777216"});
  CHECK(errors_of(b, {}, {.hidden = KnobRange{2, 100}, .align_hidden = INT64_MAX}) ==
        std::vector<std::string>{"SearchSpace::align_hidden = 9223372036854775807: must be at most 16777216"});
  CHECK(errors_of(b, {.depth = INT64_MAX}, {}) ==
        std::vector<std::string>{"LoopRecipe::depth = 9223372036854775807: must be between 1 and 65536"});
  CHECK(errors_of(b, {.loops = INT64_MAX}, {}) ==
        std::vector<std::string>{"LoopRecipe::loops = 9223372036854775807: must be at most 1024"});
  CHECK(errors_of(b, {}, {.align_experts = (i64{1} << 20) + 1, .align_head_dim = -1, .min_head_dim = i64{1} << 25}) ==
        std::vector<std::string>{"SearchSpace::align_experts = 1048577: must be at most 1048576",
                                 "SearchSpace::align_head_dim = -1: must be positive",
                                 "SearchSpace::min_head_dim = 33554432: must be at most 16777216"});
  // Expert counts are bounded as moe.num_experts is; KV heads as the heads.
  CHECK(errors_of(b, {}, {.experts = KnobRange{8, i64{1} << 21}}) ==
        std::vector<std::string>{"SearchSpace::experts = 8:2097152: must be at most 1048576"});
  CHECK(
      errors_of(b, {}, {.kv_heads = KnobRange{0, 2}}) ==
      std::vector<std::string>{"SearchSpace::kv_heads = 0:2: must be a positive value or a range LO:HI with LO <= HI"});
  CHECK(errors_of(b, {}, {.kv_heads = KnobRange{1, i64{1} << 25}}) ==
        std::vector<std::string>{"SearchSpace::kv_heads = 1:33554432: must be at most 16777216"});
  // The tolerance becomes a count of millionths of a percent.
  CHECK(errors_of(b, {}, {}, {.tolerance_pct = 1e300}) ==
        std::vector<std::string>{"MatchOptions::tolerance_pct = 1e+300: must be at most 1000000"});
  CHECK(errors_of(b, {}, {}, {.tolerance_pct = std::nan("")}) ==
        std::vector<std::string>{"MatchOptions::tolerance_pct = nan: must be a percentage >= 0"});
}

TEST_CASE("the time options are checked whether or not time is predicted", "[solve][errors]") {
  // Checked only where a time was predicted, a bad option once reached the table as a note ("time per token: not
  // shown: the Baseline: TimeOptions::imbalance = -5: ...") and the solve succeeded; NaN reached the JSON as null.
  const ModelConfig b = example("tiny-moe.json");
  MatchOptions o;
  o.time_options.imbalance = -5;
  CHECK(errors_of(b, {}, {}, o) ==
        std::vector<std::string>{"TimeOptions::imbalance = -5: must be in [1, 1000000]: the most loaded expert over "
                                 "the mean"});
  o.hardware = "h100";
  o.time_options = {.imbalance = std::nan(""), .decode_batch = (1 << 24) + 1, .decode_context = (1 << 30) + 1};
  CHECK(errors_of(b, {}, {}, o) ==
        std::vector<std::string>{"TimeOptions::decode_batch = 16777217: must be at most 16777216",
                                 "TimeOptions::decode_context = 1073741825: must be at most 1073741824",
                                 "TimeOptions::imbalance = nan: must be in [1, 1000000]: the most loaded expert over "
                                 "the mean"});
}

TEST_CASE("a time that is not a finite number is an error, never a match", "[solve][errors]") {
  // NaN and infinity compare false with everything. Cast to attoseconds they became one arbitrary integer, so a
  // candidate whose time was NaN matched a Baseline whose time was NaN: "0.000% within the 1% tolerance".
  CHECK_THROWS_AS(solve_detail::attoseconds(std::nan("")), overflow_error);
  CHECK_THROWS_AS(solve_detail::attoseconds(HUGE_VAL), overflow_error);
  CHECK_THROWS_AS(solve_detail::attoseconds(-1.0), overflow_error);
  CHECK_THROWS_WITH(solve_detail::attoseconds(std::nan("")),
                    "training seconds per token = nan: must be a positive number below 1e+20 to compare in "
                    "attoseconds");
  CHECK(solve_detail::attoseconds(1e-6) == 1'000'000'000'000);
  // A spec built in code is not checked as a file is: its infinite time is an error, not a layout the candidate
  // cannot shard (which would leave the candidate the Baseline's time: a perfect match).
  HardwareSpec hw = hardware_spec("h100");
  hw.memory_efficiency = 5e-324;
  MatchOptions o;
  o.match = {Budget::time};
  o.hardware = "h100";
  CHECK_THROWS_AS(solve_detail::training_attoseconds(example("tiny-moe.json"), hw, o), overflow_error);
  CHECK_THROWS_AS(solve_detail::time_figure(example("tiny-moe.json"), hw, o), overflow_error);
  // The time limit's ceiling stays an integer however large the Baseline's time.
  o.time_limit = 1e6;
  const solve_detail::i128 huge = solve_detail::attoseconds(9e19);
  CHECK(solve_detail::time_ceiling(o, huge) > huge);
}

TEST_CASE("memory matched alone raises count()'s error where the largest expert count overflows", "[solve][errors]") {
  // 65,536 layers of experts 2^22 wide at H = 64: the Baseline's 8 experts hold 65,536 x 8 x 3 x 64 x 2^22
  // = 3 x 2^47 expert weights; the space's expert counts are the multiples of 2^17 up to 2^20, whose largest
  // holds 3 x 2^64, past 64-bit integers. Memory matched alone counts no parameters, but the largest expert
  // count of each hidden size still checks them.
  ModelConfig b = example("tiny-moe.json");
  b.loops = {};
  b.num_layers = i64{1} << 16;
  b.moe.expert_width = i64{1} << 22;
  b.moe.shared_width = 32;
  SearchSpace s;
  s.hidden = KnobRange{64, 64};
  s.experts = KnobRange{8, i64{1} << 20};
  s.align_experts = i64{1} << 17;
  s.heads = KnobRange{4, 4};
  s.kv_heads = KnobRange{2, 2};
  s.head_dim = KnobRange{16, 16};
  s.min_head_dim = 16;
  MatchOptions o;
  o.match = {Budget::memory};
  CHECK_THROWS_AS(solve(b, {}, s, o), overflow_error);
  CHECK_THROWS_WITH(solve(b, {}, s, o), Catch::Contains("overflows 64-bit integers"));
}

TEST_CASE("each config is counted at most once: the configs counted never exceed the space", "[solve]") {
  // tiny-moe's geometry fixed (4/2/16) and 8 experts: KV alone does not move with H or the expert width, so nothing
  // prunes and every (H, width) is counted: 128 hidden sizes x 4 widths. The binary search for the first H that
  // does not fall short once counted its probes again in the loop after it: 533 configs counted of 512.
  SearchSpace s;
  s.hidden = KnobRange{64, 8192};
  s.heads = KnobRange{4, 4};
  s.kv_heads = KnobRange{2, 2};
  s.head_dim = KnobRange{16, 16};
  s.min_head_dim = 16;
  s.min_head_dim = 16;
  s.attention_ratio = {0.001, 1000};
  s.experts = KnobRange{8, 8};
  s.expert_width = KnobRange{16, 64};
  s.ffn = FfnScaling::searched;
  MatchOptions o;
  o.match = {Budget::kv};
  o.top = 1;
  o.relaxations = false;
  const MatchResult r = solve(example("tiny-moe.json"), {}, s, o);
  CHECK(r.space_size == 512);
  CHECK(r.evaluated == 512);
}

TEST_CASE("the search space is counted before it is listed", "[solve]") {
  const ModelConfig b = example("tiny-moe.json");  // 4 heads, 2 KV heads of 16; H 64 (the only default H)
  // The width rule bounds free or ranged query heads: heads 1..2^24 under the
  // default ratio [0.5, 2] need q x d in [32, 128] at H 64, KV heads any
  // divisor. d = 32: q 1..4, (q, kv) pairs 1+2+2+3 = 8; d = 40: q 1..3, 5;
  // d = 48, 56, 64: q 1..2, 3 each; d = 72..128 (8 sizes): q 1, 1 each:
  // 8 + 5 + 9 + 8 = 30 geometries, x 1 H x 8 expert counts (2..64: 8, 16, ..., 64).
  CHECK(solve(b, {}, {.heads = KnobRange{1, i64{1} << 24}}).space_size == 30 * 8);
  // A ratio range as wide as allowed lets 2e6 head counts fit head_dim 32:
  // counting stops at once above 2^20 (once listed pair by pair: quadratic, days).
  CHECK(errors_of(b, {}, {.heads = KnobRange{1, i64{1} << 24}, .attention_ratio = {1e-6, 1e6}}) ==
        std::vector<std::string>{"search space too large: more than 1048576 attention geometries"});
  // A Baseline of 720720 heads with head_dim 2^24: its own width ratio
  // (720720 x 2^24 / 64) widens the default range, so every head count fits
  // head_dim 32 (once 503,315,760 geometries listed first: 75 s and 12.7 GB).
  ModelConfig wide = b;
  wide.attention.num_heads = wide.attention.num_kv_heads = 720720;
  wide.attention.head_dim = i64{1} << 24;
  CHECK(errors_of(wide, {}, {}) ==
        std::vector<std::string>{"search space too large: more than 1048576 attention geometries"});
  // Under the geometry bound, over the pair bound: 2^20 geometries (KV 1 only,
  // head counts 1..2^20, head_dim 32, all within [1e-6, 1e6] x H) x 512 hidden
  // sizes (1..512) = 2^29 > 2^28.
  CHECK(errors_of(b, {},
                  {.hidden = KnobRange{1, 512},
                   .head_dim = KnobRange{32, 32},
                   .kv_heads = KnobRange{1, 1},
                   .heads = KnobRange{1, i64{1} << 20},
                   .align_hidden = 1,
                   .attention_ratio = {1e-6, 1e6}}) ==
        std::vector<std::string>{
            "search space too large: 1048576 attention geometries x 512 hidden sizes (at most 268435456 pairs)"});
  // A KV range far from every head count the width rule allows costs nothing
  // to count, and says which constraints emptied the space.
  CHECK(errors_of(b, {}, {.kv_heads = KnobRange{i64{1} << 24, i64{1} << 24}, .heads = KnobRange{1, i64{1} << 24}}) ==
        std::vector<std::string>{"SearchSpace::kv_heads = 16777216: contains no divisor of a query-head count whose "
                                 "width fits SearchSpace::attention_ratio = 0.5:2"});
}

TEST_CASE("head counts and their KV divisors are listed in order, as brute force lists them", "[solve]") {
  const ModelConfig b = example("tiny-moe.json");
  // Heads 4..12, KV 2..4: (4,2) (4,4) (6,2) (6,3) (8,2) (8,4) (9,3) (10,2) (12,2) (12,3) (12,4): 11 pairs, one
  // head size (32; widths 128..384 within [0.5, 8] x 64): 11 geometries, each H once, all counted by brute force.
  const SearchSpace s{.hidden = KnobRange{64, 64},
                      .head_dim = KnobRange{32, 32},
                      .kv_heads = KnobRange{2, 4},
                      .heads = KnobRange{4, 12},
                      .attention_ratio = {0.5, 8}};
  const MatchResult fast = solve(b, {}, s, {.top = 11});
  const MatchResult brute = solve_brute_force(b, {}, s, {.top = 11});
  CHECK(brute.space_size == 11 * 8);  // x 8 expert counts (2..64 in steps of 8: 8, 16, ..., 64)
  REQUIRE(fast.candidates.size() == 11);
  for (std::size_t i = 0; i < 11; ++i) CHECK(fast.candidates[i].knobs == brute.candidates[i].knobs);
}

TEST_CASE("the contexts to match at are bounded in number", "[solve]") {
  const ModelConfig b = example("tiny-moe.json");
  CHECK(errors_of(b, {}, {}, {.contexts = std::vector<i64>(65, 8)}) ==
        std::vector<std::string>{"MatchOptions::contexts: 65 contexts listed: at most 64"});
  CHECK(solve(b, {}, {}, {.contexts = std::vector<i64>(64, 8)}).candidates.front().budgets.size() == 64);
}
