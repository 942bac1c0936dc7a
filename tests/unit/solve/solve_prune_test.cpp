// The solver's shortcuts against brute force where they cut the most: fine
// hidden-size grids, FLOPs and parameters matched without the KV cache (so no
// geometry is ruled out by its KV cache and only the hidden-size pruning and
// the binary search over E stop the search), expert widths searched, several
// contexts. And the pieces the shortcuts rest on: the KV cache per cached
// element, and the size limits.
#include <random>

#include <catch2/catch.hpp>

#include <algorithm>

#include "property_cases.hpp"
#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "solve/exact_budget.hpp"
#include "solve_test_helpers.hpp"
#include "test_configs.hpp"

using namespace smelt;
using i64 = std::int64_t;

namespace {

using test::Random;

// A small MoE (or, one time in six, dense) Baseline with every feature that
// enters the budgets' growth in H: proportional FFN widths of three kinds,
// dense-first layers, shared experts, biases, sliding windows, MLA.
ModelConfig prune_baseline(Random& r) {
  ModelConfig c;
  c.name = "random";
  c.vocab_size = r.in(50, 2000);
  c.num_layers = r.in(2, 8);
  c.hidden_size = 8 * r.in(8, 40);
  c.context_length = r.in(8, 400);
  c.kv_cache_bytes = r.coin() ? 2 : 1;
  auto& a = c.attention;
  a.num_heads = std::vector<i64>{2, 4, 6, 8}[static_cast<std::size_t>(r.in(0, 3))];
  do a.num_kv_heads = r.in(1, a.num_heads);
  while (a.num_heads % a.num_kv_heads != 0);
  a.head_dim = 8 * r.in(2, 8);
  a.qkv_bias = r.coin();
  a.out_bias = r.in(0, 3) == 0;
  if (r.in(0, 5) == 0) {
    a.type = AttentionType::mla;
    a.mla = {8 * r.in(0, 4), 8 * r.in(1, 8), 8 * r.in(1, 4), 8 * r.in(0, 2), 8 * r.in(1, 4)};
    a.qkv_bias = false;
  }
  if (r.in(0, 2) == 0) {
    a.pattern = {LayerAttention::sliding, LayerAttention::full};
    a.window = r.in(4, 64);
  }
  c.norm = r.coin() ? NormType::layernorm : NormType::rmsnorm;
  c.ffn.type = r.coin() ? FfnType::gated : FfnType::plain;
  c.ffn.bias = r.in(0, 3) == 0;
  if (r.in(0, 5) > 0) {
    c.moe.num_experts = r.in(2, 16);
    c.moe.top_k = r.in(1, std::min<i64>(4, c.moe.num_experts));
    c.moe.expert_width = 8 * r.in(2, 24);
    c.moe.router_bias = r.coin();
    if (r.coin()) {
      c.moe.num_shared_experts = r.in(1, 2);
      c.moe.shared_width = 8 * r.in(2, 24);
      c.moe.shared_gate = r.coin();
    }
    c.moe.first_dense = r.in(0, 1);
    if (c.moe.first_dense > 0) c.ffn.dense_width = 8 * r.in(4, 40);
  } else {
    c.ffn.dense_width = 8 * r.in(4, 40);
  }
  return c;
}

}  // namespace

TEST_CASE("with fine hidden sizes and the KV cache often unmatched, the top candidates equal brute force",
          "[solve][brute]") {
  Random r{20261201};
  i64 smart = 0;
  i64 brute = 0;
  for (int trial = 0; trial < test::property_cases(120); ++trial) {
    const ModelConfig b = prune_baseline(r);
    LoopRecipe recipe;
    recipe.loops = r.in(1, 3);
    if (r.coin()) recipe.span = LoopSpan::of_fraction(0.25 * static_cast<double>(r.in(1, 4)));
    SearchSpace s;
    s.align_hidden = std::vector<i64>{1, 2, 4, 8}[static_cast<std::size_t>(r.in(0, 3))];
    s.hidden = KnobRange{b.hidden_size / 4, b.hidden_size + 16};
    // About 40 hidden sizes whatever the alignment: brute force counts each.
    s.hidden->hi = std::min(s.hidden->hi, s.hidden->lo + 40 * s.align_hidden);
    s.align_experts = r.in(1, 3);
    if (b.is_moe()) s.experts = KnobRange{1, 2 * b.moe.num_experts};
    s.align_head_dim = 8;
    s.min_head_dim = 8;
    if (b.attention.type == AttentionType::gqa) {
      s.head_dim = KnobRange{8, b.attention.head_dim + 8};
      s.kv_heads = KnobRange{1, b.attention.num_heads};
      // Query heads kept, or (one time in four) ranged over [h/2, 2h]: free
      // heads over the whole width-rule band would make brute force slow.
      const i64 h = b.attention.num_heads;
      if (r.in(0, 3) == 0)
        s.heads = KnobRange{std::max<i64>(1, h / 2), 2 * h};
      else
        s.free_heads = false;
    }
    s.align_ffn = std::vector<i64>{1, 8, 16}[static_cast<std::size_t>(r.in(0, 2))];
    s.ffn = std::vector<FfnScaling>{FfnScaling::proportional, FfnScaling::fixed,
                                    FfnScaling::searched}[static_cast<std::size_t>(r.in(0, b.is_moe() ? 2 : 1))];
    if (s.ffn == FfnScaling::searched) {
      const i64 lo = 8 * r.in(1, b.moe.expert_width / 8);
      s.align_ffn = 8;
      s.expert_width = KnobRange{lo, lo + 8 * r.in(0, 3)};
    }
    MatchOptions o;
    o.match = r.in(0, 2) > 0 ? std::vector<Budget>{Budget::flops, Budget::params}
                             : std::vector<Budget>{Budget::flops, Budget::params, Budget::kv};
    if (r.in(0, 5) == 0) o.match = {r.coin() ? Budget::flops : Budget::params};
    o.flops_with_head = r.coin();
    o.contexts = {b.context_length};
    if (r.coin()) o.contexts.push_back(r.in(8, 3000));
    o.top = r.in(1, 6);
    o.relaxations = false;  // each would be one more brute force (relax_test compares them)
    INFO("trial " << trial);
    const MatchResult fast = solve(b, recipe, s, o);
    const MatchResult slow = solve_brute_force(b, recipe, s, o);
    REQUIRE(fast.candidates.size() == slow.candidates.size());
    for (std::size_t i = 0; i < fast.candidates.size(); ++i) {
      INFO("candidate " << i);
      CHECK(fast.candidates[i].knobs == slow.candidates[i].knobs);
      CHECK(fast.candidates[i].max_abs_mismatch_pct == slow.candidates[i].max_abs_mismatch_pct);
    }
    CHECK(fast.space_size == slow.space_size);
    smart += fast.evaluated;
    brute += slow.evaluated;
  }
  // Most spaces match without the KV cache, where only the pruning of hidden
  // sizes and the binary search over E save work.
  if (test::every_case) CHECK(smart * 20 < brute);
}

TEST_CASE("the KV cache per cached element, times a geometry's elements, is the counted KV cache", "[solve]") {
  // 54B-class example: 30 full-attention layers, bf16 cache, T = 4096 (its
  // context): 30 x 4096 x 2 = 245,760 bytes per element; x 2 x 6 KV heads x 96
  // = 1,152 elements: 283,115,520 bytes (69,120 a token, docs/solver.md
  // section 10).
  const ModelConfig big = read_config(SMELT_SOURCE_DIR "/examples/smelt-baseline-54b.json");
  const std::vector<i64> t{4096};
  CHECK(solve_detail::kv_bytes_per_element(big, t, solve_detail::layer_kinds(big)) ==
        std::vector<solve_detail::i128>{245'760});
  CHECK(solve_detail::exact_budgets(big, t).kv_bytes == std::vector<solve_detail::i128>{283'115'520});
  // Sliding, chunked and looped layers hold fewer tokens or count more visits:
  // 7 layers (sliding 5, full, chunked 3, ...), layers 2-3 looped twice, at T = 8.
  // Visits: layers 1..7 = 1, 2, 2, 1, 1, 1, 1; kinds sliding (1, 4, 7), full
  // (2, 5), chunked (3, 6). Tokens held 5, 8, 3: (1 + 1 + 1) x 5 + (2 + 1) x 8 +
  // (2 + 1) x 3 = 48 element-tokens, x 2 bytes = 96.
  ModelConfig c = test::tiny_moe();
  c.num_layers = 7;
  c.attention.window = 5;
  c.attention.chunk = 3;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::full, LayerAttention::chunked};
  const std::vector<i64> eight{8};
  CHECK(solve_detail::kv_bytes_per_element(c, eight, solve_detail::layer_kinds(c)) ==
        std::vector<solve_detail::i128>{96});
  CHECK(solve_detail::exact_budgets(c, eight).kv_bytes == std::vector<solve_detail::i128>{96 * 2 * 2 * 16});
}

TEST_CASE("with the expert width searched, the visit limit counts (geometry, width, hidden size) triples", "[solve]") {
  const ModelConfig b = test::tiny_moe();  // expert width 32
  // 2^20 geometries (KV 1, head counts 1..2^20, head_dim 32, every width within
  // [1e-6, 1e6] x H) x 64 hidden sizes = 2^26: under 2^28 with 4 widths (16, 32,
  // 48, 64), over it with 5 (16 to 80).
  SearchSpace s{.hidden = KnobRange{1, 64},
                .head_dim = KnobRange{32, 32},
                .kv_heads = KnobRange{1, 1},
                .heads = KnobRange{1, i64{1} << 20},
                .expert_width = KnobRange{16, 80},
                .align_hidden = 1,
                .attention_ratio = {1e-6, 1e6},
                .ffn = FfnScaling::searched};
  std::string message = "no error";
  try {
    (void)solve(b, {}, s);
  } catch (const config_error& e) {
    message = e.what();
  }
  CHECK(message ==
        "search space too large: 1048576 attention geometries x 5 expert widths x 64 hidden sizes (at most "
        "268435456 triples)");
}

TEST_CASE("with memory or time matched alone, each (H, geometry) counts a few expert counts, not every one",
          "[solve][memory][time]") {
  // The 12-layer example with its own attention geometry (10 / 2 / 128, width 1,280): H from 640 to 1,280 by 64
  // (11 sizes; narrower ones break the width rule) x 192 expert counts (8 to 1,536 by 8) = 2,112 candidates.
  // Memory and time are not lines in E but rise with it: each hidden size's best E is found from its two ends
  // and the chords between the counts (a few counts), where counting at the lines' minimiser (none are matched)
  // once walked down from the largest E one count at a time (1,652 of the 2,112 counted with memory, 1,660 with
  // time; now 48 and 49).
  const ModelConfig b = read_config(SMELT_SOURCE_DIR "/examples/smelt-baseline-12l.json");
  const SearchSpace s{.head_dim = KnobRange{128, 128}, .kv_heads = KnobRange{2, 2}, .free_heads = false};
  for (const Budget budget : {Budget::memory, Budget::time}) {
    INFO(to_string(budget));
    const MatchOptions o{.match = {budget}, .top = 3, .hardware = "h100"};
    const MatchResult fast = solve(b, {}, s, o);
    const MatchResult slow = solve_brute_force(b, {}, s, o);
    CHECK(fast.space_size == 2'112);
    CHECK(slow.evaluated == 2'112);
    REQUIRE(fast.candidates.size() == slow.candidates.size());
    for (std::size_t i = 0; i < fast.candidates.size(); ++i) {
      CHECK(fast.candidates[i].knobs == slow.candidates[i].knobs);
      CHECK(fast.candidates[i].max_abs_mismatch_pct == slow.candidates[i].max_abs_mismatch_pct);
    }
    CHECK(fast.evaluated < 100);
  }
}
