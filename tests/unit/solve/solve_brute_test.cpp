// Property: on reduced spaces the solver returns exactly what enumerating every
// candidate returns: the same best, the same alternatives in the same order,
// the same exact objective. 240 random Baselines and option sets, fixed seed:
// the attention shape rules (free, kept or ranged query heads, KV heads any
// divisor or ranged, max_head_dim, width ratios), MLA, dense-first layers,
// shared experts, one to three contexts, and the expert width searched.
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <catch2/catch.hpp>

#include "property_cases.hpp"
#include "scratch_dir.hpp"
#include "smelt/error.hpp"
#include "smelt/solve.hpp"
#include "solve_test_helpers.hpp"

using namespace smelt;

namespace {

using test::Random;

ModelConfig brute_baseline(Random& r) {
  ModelConfig c;
  c.name = "random";
  c.vocab_size = r.in(50, 3000);
  c.num_layers = r.in(2, 9);
  c.hidden_size = 16 * r.in(4, 24);
  c.context_length = r.in(8, 600);
  c.kv_cache_bytes = r.coin() ? 2 : 1;
  c.tie_embeddings = r.coin();
  auto& a = c.attention;
  a.num_heads = std::vector<std::int64_t>{2, 4, 6, 8, 12}[static_cast<std::size_t>(r.in(0, 4))];
  do a.num_kv_heads = r.in(1, a.num_heads);
  while (a.num_heads % a.num_kv_heads != 0);
  a.head_dim = 8 * r.in(2, 10);
  a.qkv_bias = r.coin();
  a.qk_norm = r.coin() ? QkNorm::per_head : QkNorm::none;
  if (r.in(0, 5) == 0) {  // MLA: its attention is kept, so its KV cache cannot be matched
    a.type = AttentionType::mla;
    a.mla = {8 * r.in(0, 4), 8 * r.in(1, 8), 8 * r.in(1, 4), 8 * r.in(0, 2), 8 * r.in(1, 4)};
    a.qkv_bias = false;
    a.qk_norm = QkNorm::none;
  }
  if (r.in(0, 3) == 0) {
    a.pattern = {LayerAttention::sliding, LayerAttention::full};
    a.window = r.in(4, 64);
  }
  c.ffn.type = r.coin() ? FfnType::gated : FfnType::plain;
  c.ffn.bias = r.in(0, 3) == 0;
  if (r.in(0, 5) > 0) {
    c.moe.num_experts = r.in(2, 24);
    c.moe.top_k = r.in(1, std::min<std::int64_t>(4, c.moe.num_experts));
    c.moe.expert_width = 8 * r.in(2, 20);
    c.moe.router_bias = r.coin();
    if (r.coin()) {
      c.moe.num_shared_experts = r.in(1, 2);
      c.moe.shared_width = 8 * r.in(2, 20);
      c.moe.shared_gate = r.coin();
    }
    c.moe.first_dense = r.in(0, 1);
    if (c.moe.first_dense > 0) c.ffn.dense_width = 8 * r.in(4, 40);
  } else {
    c.ffn.dense_width = 8 * r.in(4, 40);
  }
  return c;
}

constexpr std::int64_t kMaxBruteForce = 100'000;  // candidates per trial

// The shipped H100 spec without its fixed cost per op, written once to a
// temporary file: these small models would otherwise be bound by that cost
// alone, and every candidate of a space would take nearly the same time.
const std::string& h100_without_overhead() {
  static const std::string path = [] {
    std::ifstream in(std::string(SMELT_SOURCE_DIR) + "/data/hardware/h100.json");
    std::stringstream text;
    text << in.rdbuf();
    std::string json = text.str();
    const std::string from = "\"op_overhead\": 5e-6";
    REQUIRE(json.find(from) != std::string::npos);
    json.replace(json.find(from), from.size(), "\"op_overhead\": 0");
    const auto file = test::scratch_path("smelt-h100-no-overhead.json");
    std::ofstream(file) << json;
    return file.string();
  }();
  return path;
}

// Solves `trials` random spaces both ways and requires identical top lists.
// With `searched_width`, MoE Baselines search the expert width too (its
// default domain or a random sub-range of it), shared and dense widths
// following it.
// With `memory`, per-GPU memory under a random layout (expert and tensor
// parallel, micro-batch) is a limit near the Baseline's, a matched budget, or
// both; or the predicted training time per token on an H100 under that layout is.
// memory_alone, time_alone and memory_time match memory, time or both with no
// other budget beside them (memory_time: with a random subset of the others,
// possibly none), so that the search prunes on them alone.
enum class Memory { off, limit, match, both, time_limit, time_match, time_both, memory_alone, time_alone, memory_time };

// `draw` picks another sequence of random spaces for the same kind of trial.
void compare_with_brute_force(int trials, bool searched_width, Memory memory = Memory::off, unsigned draw = 0) {
  Random r{(memory == Memory::off ? 20261130u : 20261205u + static_cast<unsigned>(memory)) + 1000u * draw};
  std::int64_t smart_work = 0;
  std::int64_t brute_work = 0;
  int empty_spaces = 0;
  int redrawn = 0;
  int limited_trials = 0;  // where the time limit dropped a candidate
  const int drawn = test::property_cases(trials);
  for (int trial = 0; trial < drawn; ++trial) {
    const ModelConfig b = brute_baseline(r);
    LoopRecipe recipe;
    recipe.span = std::vector<LoopSpan>{LoopSpan::middle_half(), LoopSpan::full(), LoopSpan::of_fraction(0.25),
                                        LoopSpan::of_fraction(0.75)}[static_cast<std::size_t>(r.in(0, 3))];
    recipe.loops = r.in(1, 3);
    if (r.in(0, 4) == 0) recipe.depth = b.num_layers + r.in(0, 2);
    SearchSpace s;
    s.align_hidden = 16;
    s.hidden = KnobRange{b.hidden_size / 2, b.hidden_size + 64};
    s.align_experts = r.in(1, 4);
    if (b.is_moe()) s.experts = KnobRange{1, 3 * b.moe.num_experts};
    s.align_head_dim = 8;
    s.min_head_dim = 8;
    if (b.attention.type == AttentionType::gqa) {
      // The head_dim range, or its default capped by a random max_head_dim.
      if (r.in(0, 3) > 0)
        s.head_dim = KnobRange{8, b.attention.head_dim + 16};
      else
        s.max_head_dim = 8 * r.in(1, 12);
      // Query heads: free over the width rule (the default), kept, or ranged.
      const std::int64_t heads = r.in(0, 3);
      if (heads == 0) s.free_heads = false;
      if (heads == 1)
        s.heads = KnobRange{std::max<std::int64_t>(1, b.attention.num_heads / 2), 2 * b.attention.num_heads};
      if (r.in(0, 3) == 0) s.kv_heads = KnobRange{1, b.attention.num_kv_heads};
      // The width rule: the default (widened to the Baseline's own ratio), or
      // one of a few, exact or not in binary (0.7, 1.3).
      const std::vector<RatioRange> ratios{s.attention_ratio, {0.25, 4}, {0.7, 1.3}, {1, 2}, {0.5, 0.5}};
      s.attention_ratio = ratios[static_cast<std::size_t>(r.in(0, 4))];
    }
    s.align_ffn = 8;
    s.ffn = r.coin() ? FfnScaling::proportional : FfnScaling::fixed;
    if (searched_width && b.is_moe()) {
      s.ffn = FfnScaling::searched;
      const std::int64_t w = b.moe.expert_width;
      // Mostly a few widths around the Baseline's (brute force multiplies its
      // work by each); the default domain [W/8, 2W] one time in eight.
      if (r.in(0, 7) > 0) {
        const std::int64_t lo = 8 * r.in(1, w / 8);
        s.expert_width = KnobRange{lo, lo + 8 * r.in(0, 5)};
      }
    }
    MatchOptions o;
    o.match.clear();
    while (o.match.empty())
      for (const Budget budget : {Budget::flops, Budget::params, Budget::kv})
        if (r.coin()) o.match.push_back(budget);
    o.flops_with_head = r.coin();
    o.contexts = {b.context_length};
    for (std::int64_t extra = r.in(0, 2); extra > 0; --extra) o.contexts.push_back(r.in(8, 2000));
    o.top = r.in(1, 4);
    // Relaxations solve a dozen spaces more each: one trial in twenty, drawing no random number. Not in a sanitizer
    // build's few trials, where the first would be one (relax_test.cpp compares them there).
    o.relaxations = test::every_case && trial % 20 == 0;
    if (memory != Memory::off) {
      MemoryLayout& l = o.memory_layout;
      l.micro_batch = r.in(1, 2);
      l.seq = r.in(8, 64);
      l.ep = r.in(1, 2);
      l.tp = r.in(0, 3) == 0 ? 2 : 1;
      l.dp = l.ep;
      double base = 0;
      try {  // the layout must hold for the Baseline (its candidates may still break it: they are dropped)
        base = static_cast<double>(smelt::memory(CheckedConfig(b), l).total);
      } catch (const config_error&) {
        l.ep = l.tp = l.dp = 1;
        base = static_cast<double>(smelt::memory(CheckedConfig(b), l).total);
      }
      const bool timed = memory == Memory::time_limit || memory == Memory::time_match || memory == Memory::time_both;
      if (memory == Memory::memory_alone || memory == Memory::time_alone || memory == Memory::memory_time) {
        // After every draw the other modes make, so that theirs stay as they were.
        if (memory == Memory::memory_time)
          std::erase_if(o.match, [&](Budget) { return r.coin(); });
        else
          o.match.clear();
        if (memory != Memory::time_alone) o.match.push_back(Budget::memory);
        if (memory != Memory::memory_alone) {
          o.hardware = h100_without_overhead();
          o.match.push_back(Budget::time);
        }
      } else if (timed) {
        o.hardware = h100_without_overhead();
        if (memory != Memory::time_limit) o.match.push_back(Budget::time);
        // A limit near the Baseline's time or above it: a looped model visits more layers.
        if (memory != Memory::time_match) o.time_limit = 0.95 + 0.05 * static_cast<double>(r.in(0, 6));
      } else {
        if (memory != Memory::limit) o.match.push_back(Budget::memory);
        // A limit a little below or above the Baseline's memory.
        if (memory != Memory::match)
          o.memory_limit.bytes = static_cast<std::int64_t>(base * (0.85 + 0.05 * static_cast<double>(r.in(0, 6))));
      }
    }
    INFO("trial " << trial);
    MatchResult fast;
    try {
      fast = solve(b, recipe, s, o);
    } catch (const config_error& e) {
      // A width rule no geometry fits: brute force refuses the same space.
      CHECK_THROWS_WITH(solve_brute_force(b, recipe, s, o), e.what());
      ++empty_spaces;
      continue;
    } catch (const std::exception& e) {
      FAIL("solve threw: " << e.what());
    }
    // Free query heads under a wide width ratio can hold a million candidates:
    // brute force would take seconds, so such a draw is replaced by the next.
    // Brute force counts each candidate's memory too: smaller spaces then.
    if (fast.space_size > (memory == Memory::off ? kMaxBruteForce : kMaxBruteForce / 25)) {
      ++redrawn;
      --trial;
      continue;
    }
    const MatchResult slow = solve_brute_force(b, recipe, s, o);
    REQUIRE(fast.candidates.size() == slow.candidates.size());
    for (std::size_t i = 0; i < fast.candidates.size(); ++i) {
      INFO("candidate " << i);
      CHECK(fast.candidates[i].knobs == slow.candidates[i].knobs);
      CHECK(fast.candidates[i].max_abs_mismatch_pct == slow.candidates[i].max_abs_mismatch_pct);
    }
    REQUIRE(fast.relaxations.size() == slow.relaxations.size());
    for (std::size_t i = 0; i < fast.relaxations.size(); ++i) {
      INFO("relaxation " << i);
      CHECK(fast.relaxations[i].changes == slow.relaxations[i].changes);
      CHECK(fast.relaxations[i].max_abs_mismatch_pct == slow.relaxations[i].max_abs_mismatch_pct);
      CHECK(fast.relaxations[i].knobs == slow.relaxations[i].knobs);
      CHECK(fast.relaxations[i].error == slow.relaxations[i].error);
    }
    CHECK(fast.space_size == slow.space_size);
    if (memory == Memory::off) CHECK(slow.evaluated == slow.space_size);
    smart_work += fast.evaluated;
    brute_work += slow.evaluated;
    limited_trials += fast.dropped_for_time > 0 ? 1 : 0;
  }
  if (!test::every_case) return;
  // The search counts far fewer configs than the spaces hold. With memory or time matched alone, every (H,
  // geometry) holds a candidate near the target, and these spaces have few expert counts each (two or more):
  // each costs its two ends and a count or two between them, a third of the space or more.
  const bool alone = memory == Memory::memory_alone || memory == Memory::time_alone;
  CHECK(smart_work * (alone ? 2 : 3) < brute_work);
  // Few spaces are empty: nearly every trial compares two lists (a memory
  // limit below every candidate, or a layout the Baseline breaks, empties more).
  // A time limit empties the most: these small models are bound by each op's fixed cost, and a loop's extra
  // visits pay it again.
  const bool timed = memory == Memory::time_limit || memory == Memory::time_match || memory == Memory::time_both ||
                     memory == Memory::time_alone || memory == Memory::memory_time;
  CHECK(empty_spaces * (memory == Memory::off ? 10 : (timed ? 2 : 3)) < trials);
  // And the time limit binds: some trials found their best over it and kept the closest that fits.
  if (memory == Memory::time_limit || memory == Memory::time_both) CHECK(limited_trials * 8 >= trials);
  INFO("time limit binding in " << limited_trials);
  INFO("redrawn " << redrawn << ", empty " << empty_spaces);
  CHECK(redrawn * 2 < trials * (memory == Memory::off ? 1 : 8));  // memory's spaces are capped 25x smaller
}

}  // namespace

TEST_CASE("the solver's top candidates equal brute force on 240 random spaces", "[solve][brute]") {
  compare_with_brute_force(240, false);
}

TEST_CASE("with the expert width searched, the top candidates equal brute force on 30 random spaces",
          "[solve][brute]") {
  compare_with_brute_force(30, true);
}

TEST_CASE("under a memory limit, the top candidates equal brute force on 40 random spaces", "[solve][brute][memory]") {
  compare_with_brute_force(40, false, Memory::limit);
}

TEST_CASE("with memory matched, the top candidates equal brute force on 12 random spaces", "[solve][brute][memory]") {
  compare_with_brute_force(12, false, Memory::match);
}

TEST_CASE("with memory matched and limited, the top candidates equal brute force on 8 random spaces",
          "[solve][brute][memory]") {
  compare_with_brute_force(8, true, Memory::both);
}

TEST_CASE("under a time limit, the top candidates equal brute force on 40 random spaces", "[solve][brute][time]") {
  compare_with_brute_force(40, false, Memory::time_limit);
}

TEST_CASE("with time matched, the top candidates equal brute force on 20 random spaces", "[solve][brute][time]") {
  compare_with_brute_force(20, false, Memory::time_match);
}

TEST_CASE("with time matched and limited, the top candidates equal brute force on 12 random spaces",
          "[solve][brute][time]") {
  compare_with_brute_force(12, false, Memory::time_both);
}

TEST_CASE("with memory matched alone, the top candidates equal brute force on 12 random spaces",
          "[solve][brute][memory]") {
  compare_with_brute_force(12, false, Memory::memory_alone);
}

TEST_CASE("with time matched alone, the top candidates equal brute force on 12 random spaces", "[solve][brute][time]") {
  compare_with_brute_force(12, false, Memory::time_alone);
}

TEST_CASE("with memory and time matched, the top candidates equal brute force on 12 random spaces",
          "[solve][brute][memory][time]") {
  compare_with_brute_force(12, false, Memory::memory_time);
}

// The search over E starts each hidden size where the previous one's best lay, extrapolating an end it has not
// counted (docs/solver.md section 7 (b′′)): more spaces where memory and time alone decide.
TEST_CASE("with memory or time matched alone, the top candidates equal brute force on 3 x 24 more random spaces",
          "[solve][brute][memory][time]") {
  compare_with_brute_force(24, false, Memory::memory_alone, 1);
  compare_with_brute_force(24, false, Memory::time_alone, 1);
  compare_with_brute_force(24, false, Memory::memory_time, 1);
}

TEST_CASE("with time matched and the expert width searched, the top candidates equal brute force on 12 random spaces",
          "[solve][brute][time]") {
  compare_with_brute_force(12, true, Memory::time_match);
}
