// Validation: every rule, with the exact message, all violations at once.
#include <catch2/catch.hpp>

#include "smelt/config.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;

namespace {
using test::violations_of;
}  // namespace

TEST_CASE("valid configs pass validation", "[config]") {
  CHECK_NOTHROW(validate(test::tiny_moe()));
  CHECK_NOTHROW(validate(test::mixtral_8x7b()));
}

TEST_CASE("every violation is listed at once with field, value and rule", "[config]") {
  ModelConfig c = test::tiny_moe();
  c.hidden_size = 0;
  c.attention.num_kv_heads = 3;
  c.moe.top_k = 9;
  c.loops = {{3, 5, 2, 0.5}};
  CHECK(violations_of(c) == std::vector<std::string>{
                                "hidden_size = 0: must be positive",
                                "attention.num_kv_heads = 3: must divide attention.num_heads = 4",
                                "moe.top_k = 9: must be at most moe.num_experts = 8",
                                "loop.span = \"3-5\": must satisfy 1 <= first <= last <= num_layers = 4",
                            });
}

TEST_CASE("MoE layer selection rules are checked", "[config]") {
  ModelConfig c = test::tiny_moe();
  c.moe.layers = {2, 5, 2};
  CHECK(violations_of(c) == std::vector<std::string>{"moe.layers[1] = 5: must be a 1-based layer in 1..4",
                                                     "moe.layers[2] = 2: listed twice"});
  c = test::tiny_moe();
  c.moe.every = 2;
  c.moe.phase = 2;
  CHECK(violations_of(c) == std::vector<std::string>{"moe.layers.phase = 2: must be at most 1"});
}

TEST_CASE("dense layers need a dense FFN width", "[config]") {
  ModelConfig c = test::tiny_moe();
  c.ffn.dense_width = 0;
  CHECK(violations_of(c) ==
        std::vector<std::string>{"ffn.dense_width = 0: must be positive, since some layers are dense"});
}

TEST_CASE("sliding and chunked layers need their span", "[config]") {
  ModelConfig c = test::tiny_dense(2);
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked};
  CHECK(violations_of(c) ==
        std::vector<std::string>{"attention.window = 0: must be positive", "attention.chunk = 0: must be positive"});
}

TEST_CASE("loop counts and residual scales are checked", "[config]") {
  ModelConfig c = test::tiny_dense(4);
  c.loops = {{2, 3, 0, -1.0}};
  CHECK(violations_of(c) == std::vector<std::string>{"loop.count = 0: must be positive",
                                                     "loop.residual_scale = -1: must be a positive finite number"});
}

TEST_CASE("sizes beyond the bounds are refused before any product can overflow", "[config]") {
  ModelConfig c = test::mixtral_8x7b();
  c.hidden_size = std::int64_t{1} << 40;
  CHECK(violations_of(c) == std::vector<std::string>{"hidden_size = 1099511627776: must be at most 16777216"});
}

TEST_CASE("in-bound sizes whose totals overflow 64 bits are refused with the quantity named", "[config]") {
  ModelConfig c = test::mixtral_8x7b();
  c.hidden_size = std::int64_t{1} << 24;
  c.moe.num_experts = std::int64_t{1} << 20;
  c.moe.expert_width = std::int64_t{1} << 24;
  // 2^20 experts * 3 * 2^24 * 2^24 parameters is about 2^69.6.
  CHECK(violations_of(c) ==
        std::vector<std::string>{"model too large to count exactly: routed expert parameters overflows 64-bit "
                                 "integers (hidden_size = 16777216, num_layers = 32, context_length = 32768)"});
}

TEST_CASE("enum words parse and print the same way", "[config]") {
  CHECK(parse_layer_attention(to_string(LayerAttention::chunked), "x") == LayerAttention::chunked);
  CHECK(parse_qk_norm("per_head", "x") == QkNorm::per_head);
  CHECK_THROWS_WITH(parse_ffn_type("swiglu", "ffn.type"), "ffn.type = \"swiglu\": must be one of gated, plain");
}

TEST_CASE("spans parse from 1-based inclusive text", "[config]") {
  LoopConfig l;
  parse_span("4-9", "--span", l);
  CHECK((l.first == 4 && l.last == 9));
  parse_span("5", "--span", l);
  CHECK((l.first == 5 && l.last == 5));
  CHECK_THROWS_WITH(parse_span("4..9", "--span", l),
                    "--span = \"4..9\": must be a 1-based inclusive layer span such as \"4-9\"");
}

TEST_CASE("MLA refuses switches it would otherwise ignore", "[config]") {
  ModelConfig c = test::tiny_dense(1);
  c.attention.type = AttentionType::mla;
  c.attention.mla = {32, 16, 8, 4, 8};
  c.attention.qkv_bias = true;
  c.attention.qk_norm = QkNorm::full;
  CHECK(violations_of(c) ==
        std::vector<std::string>{"attention.qkv_bias = true: not supported with attention.type = \"mla\"",
                                 "attention.qk_norm = \"full\": must be \"none\" with attention.type = \"mla\""});
}

TEST_CASE("a loop count without a span is refused", "[config]") {
  ModelConfig c = test::tiny_dense(4);
  c.loops = {{0, 0, 2, 1.0}};
  CHECK(violations_of(c) ==
        std::vector<std::string>{"loop.span = \"0-0\": must satisfy 1 <= first <= last <= num_layers = 4"});
}

TEST_CASE("several spans: each checked, and overlapping or unordered spans refused, all at once", "[config]") {
  ModelConfig c = test::tiny_dense(6);
  c.loops = {{2, 4, 2, 0.5}, {4, 5, 0, 1.0}, {1, 1, 2, 0.5}, {6, 9, 2, 0.5}};
  CHECK(
      violations_of(c) ==
      std::vector<std::string>{
          "loops[1].count = 0: must be positive",
          "loops[3].span = \"6-9\": must satisfy 1 <= first <= last <= num_layers = 6",
          "loops[1].span = \"4-5\": must start after loops[0].span \"2-4\" ends: spans are disjoint and in layer order",
          "loops[2].span = \"1-1\": must start after loops[1].span \"4-5\" ends: spans are disjoint and in layer "
          "order"});
  c.loops = {{1, 2, 2, 0.5}, {3, 6, 2, 0.5}};  // adjacent spans are two loops, not one
  CHECK(violations_of(c).empty());
}
