// The solver's budgets, counted per layer kind, equal those read off count()'s
// per-layer report, exactly, over looped, dense-first, sliding, chunked, MLA
// and shared-expert configs at several contexts.
#include <catch2/catch.hpp>

#include "smelt/config_io.hpp"
#include "smelt/error.hpp"
#include "solve/exact_budget.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {

void require_same(const ModelConfig& c, const std::vector<std::int64_t>& contexts) {
  const LoopConfig loop = c.loops.empty() ? LoopConfig{} : c.loops.front();
  INFO(c.name << ", " << contexts.size() << " contexts, loop " << loop.first << "-" << loop.last << " x" << loop.count);
  const solve_detail::ExactBudgets fast = solve_detail::exact_budgets(c, contexts);
  const solve_detail::ExactBudgets ref = solve_detail::exact_budgets_reference(c, contexts);
  REQUIRE(fast.params_non_embedding == ref.params_non_embedding);
  REQUIRE(fast.flops_non_embedding == ref.flops_non_embedding);
  REQUIRE(fast.lm_head == ref.lm_head);
  REQUIRE(fast.kv_bytes == ref.kv_bytes);
}

const std::vector<std::vector<std::int64_t>> kContexts = {{1}, {7}, {8, 4096}, {3, 100, 32768}};

void require_same_looped(ModelConfig c) {
  for (const auto& contexts : kContexts) {
    c.loops = {};
    require_same(c, contexts);
    for (const LoopConfig& loop :
         {LoopConfig{1, 1, 3, 1.0}, LoopConfig{2, c.num_layers, 2, 1.0}, LoopConfig{1, c.num_layers, 4, 1.0}}) {
      if (loop.last > c.num_layers || loop.first > loop.last) continue;
      c.loops = {loop};
      require_same(c, contexts);
    }
  }
}

}  // namespace

TEST_CASE("per-kind budgets equal count()'s: dense-first, shared experts, looped") {
  require_same_looped(test::tiny_moe());
  require_same_looped(test::tiny_dense(5));
  require_same_looped(test::mixtral_8x7b());
  require_same_looped(test::olmoe_1b_7b());
}

TEST_CASE("per-kind budgets equal count()'s: sliding and chunked attention, MoE every other layer") {
  ModelConfig c = test::tiny_moe();
  c.num_layers = 7;
  c.attention.window = 5;
  c.attention.chunk = 3;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::full, LayerAttention::chunked};
  c.moe.every = 2;
  c.moe.phase = 1;
  c.norm = NormType::layernorm;
  c.tie_embeddings = true;
  require_same_looped(c);
  c.moe.layers = {2, 3, 7};  // listed MoE layers
  require_same_looped(c);
}

TEST_CASE("per-kind budgets equal count()'s: MLA with MTP, and the 54B-class Baseline") {
  require_same_looped(read_config(SMELT_SOURCE_DIR "/examples/deepseek-v3-mla.json"));
  require_same_looped(read_config(SMELT_SOURCE_DIR "/examples/smelt-baseline-54b.json"));
}

TEST_CASE("per-kind budgets raise count()'s error where a total overflows") {
  ModelConfig c = test::tiny_dense(4);
  c.hidden_size = std::int64_t{1} << 24;
  c.ffn.dense_width = std::int64_t{1} << 24;
  c.num_layers = 1 << 16;
  const auto message = [&](auto&& budgets) -> std::string {
    try {
      (void)budgets(c, std::vector<std::int64_t>{8});
    } catch (const overflow_error& e) {
      return e.what();
    }
    return "no error";
  };
  const std::string expected = message([](const ModelConfig& m, const std::vector<std::int64_t>& t) {
    return solve_detail::exact_budgets_reference(m, t);
  });
  CHECK_THAT(expected, Catch::Contains("overflows 64-bit integers"));
  CHECK(message([](const ModelConfig& m, const std::vector<std::int64_t>& t) {
          return solve_detail::exact_budgets(m, t);
        }) == expected);
}

TEST_CASE("fractions compare exactly below 2^63 (cross products) and above (continued fractions)") {
  using solve_detail::Fraction;
  using solve_detail::i128;
  CHECK(solve_detail::compare(Fraction{1, 3}, Fraction{2, 6}) == 0);
  CHECK(solve_detail::compare(Fraction{1, 3}, Fraction{1, 2}) == -1);
  // (2^63 + 1) / 2^64 against 1/2: above by 1/2^64, where the cross products would
  // need 2^127 and more.
  const i128 big = i128{1} << 64;
  CHECK(solve_detail::compare(Fraction{big / 2 + 1, big}, Fraction{1, 2}) == 1);
  CHECK(solve_detail::compare(Fraction{big / 2, big}, Fraction{1, 2}) == 0);
  const i128 small = (i128{1} << 63) - 1;  // the largest both paths see: 1/(2^63 - 1) < 1/(2^63 - 2)
  CHECK(solve_detail::compare(Fraction{1, small}, Fraction{1, small - 1}) == -1);
}
