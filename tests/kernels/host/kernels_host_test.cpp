// The host side of the CUDA backend, on any machine (no device needed): bf16
// rounding, the device weight layout the kernels and cuBLAS calls assume, the
// weight bytes the memory check adds up, the rotated-input count and medians.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/device_weights.hpp"
#include "device/timing.hpp"
#include "smelt/bench_weights.hpp"
#include "smelt/error.hpp"

namespace {

using smelt::kernels::to_bf16_bits;
using i64 = std::int64_t;

std::uint16_t bf16_of_bits(std::uint32_t bits) {
  const float f = std::bit_cast<float>(bits);
  return to_bf16_bits(&f, 1).front();
}

std::uint16_t bf16_of(float f) { return to_bf16_bits(&f, 1).front(); }

// H 4; attention 2 heads of 2, 1 KV head (q 4, kv 2, qkv 8); 3 gated experts of
// width 2, top-1; one gated shared expert of width 3 behind a sigmoid gate.
smelt::ModelConfig tiny() {
  smelt::ModelConfig c;
  c.name = "host-tiny";
  c.vocab_size = 16;
  c.num_layers = 1;
  c.hidden_size = 4;
  c.context_length = 8;
  c.attention.num_heads = 2;
  c.attention.num_kv_heads = 1;
  c.attention.head_dim = 2;
  c.moe.num_experts = 3;
  c.moe.top_k = 1;
  c.moe.expert_width = 2;
  c.moe.num_shared_experts = 1;
  c.moe.shared_width = 3;
  c.moe.shared_gate = true;
  return c;
}

smelt::LayerPlan tiny_plan() {
  smelt::BenchOptions o;
  o.tokens = o.context = 8;
  return smelt::make_layer_plan(tiny(), o);
}

// Row r of the row-major [rows x width] matrix `joined`, columns [from, from + n),
// against row r of `part` [rows x n] converted to bf16.
void check_block(const std::vector<std::uint16_t>& joined, i64 width, i64 from, const std::vector<float>& part, i64 n) {
  const i64 rows = static_cast<i64>(part.size()) / n;
  REQUIRE(static_cast<i64>(joined.size()) >= rows * width);
  for (i64 r = 0; r < rows; ++r)
    for (i64 c = 0; c < n; ++c)
      CHECK(joined[static_cast<std::size_t>(r * width + from + c)] ==
            bf16_of(part[static_cast<std::size_t>(r * n + c)]));
}

}  // namespace

TEST_CASE("bf16 bits: round to nearest even, NaN stays NaN", "[kernels_host]") {
  CHECK(bf16_of(1.0f) == 0x3F80);              // 0x3F800000 exactly
  CHECK(bf16_of(-2.0f) == 0xC000);             // 0xC0000000 exactly
  CHECK(bf16_of_bits(0x3F808000u) == 0x3F80);  // 1 + 2^-8: a tie, 0x3F80 is even: down
  CHECK(bf16_of_bits(0x3F818000u) == 0x3F82);  // 1 + 3 2^-8: a tie, 0x3F81 is odd: up
  CHECK(bf16_of_bits(0x3F808001u) == 0x3F81);  // just above the tie: up
  CHECK(bf16_of_bits(0x3F807FFFu) == 0x3F80);  // just below: down
  CHECK(bf16_of_bits(0x7F800000u) == 0x7F80);  // +inf
  CHECK(bf16_of_bits(0x7F7FFFFFu) == 0x7F80);  // FLT_MAX rounds to +inf, as __float2bfloat16_rn does
  CHECK(bf16_of_bits(0x7FC00000u) == 0x7FC0);  // quiet NaN
  CHECK(bf16_of_bits(0x7F800001u) == 0x7FC0);  // a NaN whose payload is in the low bits: not +inf
  CHECK(bf16_of_bits(0xFF800001u) == 0xFFC0);  // and with the sign set
}

TEST_CASE("device weights: fused and side-by-side layouts", "[kernels_host]") {
  const smelt::LayerPlan plan = tiny_plan();
  const smelt::LayerWeights w = smelt::make_layer_weights(plan, 0, 42);
  const smelt::kernels::HostLayer h = smelt::kernels::to_host_layer(plan.config, false, 0, w);
  REQUIRE(h.moe);
  // wqkv [H x (q | k | v)] = [4 x 8]: each row is wq's row, then wk's, then wv's.
  REQUIRE(h.wqkv.size() == 4 * 8);
  check_block(h.wqkv, 8, 0, w.wq, 4);
  check_block(h.wqkv, 8, 4, w.wk, 2);
  check_block(h.wqkv, 8, 6, w.wv, 2);
  CHECK(h.wo == to_bf16_bits(w.wo.data(), w.wo.size()));
  CHECK(h.router == to_bf16_bits(w.router.data(), w.router.size()));
  // Experts one after another: up [H x 2F] = [gate | up] per row (the activation
  // kernel reads gate from the first F columns), down [F x H].
  REQUIRE(h.expert_up.size() == 3 * 4 * 4);
  REQUIRE(h.expert_down.size() == 3 * 2 * 4);
  for (std::size_t e = 0; e < 3; ++e) {
    const std::vector<std::uint16_t> up(h.expert_up.begin() + static_cast<i64>(e) * 16,
                                        h.expert_up.begin() + static_cast<i64>(e + 1) * 16);
    check_block(up, 4, 0, w.experts[e].gate, 2);
    check_block(up, 4, 2, w.experts[e].up, 2);
    const std::vector<std::uint16_t> down(h.expert_down.begin() + static_cast<i64>(e) * 8,
                                          h.expert_down.begin() + static_cast<i64>(e + 1) * 8);
    CHECK(down == to_bf16_bits(w.experts[e].down.data(), 8));
  }
  REQUIRE(h.shared.size() == 1);
  CHECK(h.shared[0].width == 3);
  REQUIRE(h.shared[0].up.size() == 4 * 6);
  check_block(h.shared[0].up, 6, 0, w.shared[0].gate, 3);
  check_block(h.shared[0].up, 6, 3, w.shared[0].up, 3);
  CHECK(h.shared_gate.size() == 4);

  // Bytes: attention 4 x 8 + 4 x 4 = 48, router 4 x 3 = 12, experts 3 (4 x 4 +
  // 2 x 4) = 72, shared 4 x 6 + 3 x 4 = 36, gate 4: 172 elements, 344 bytes.
  CHECK(smelt::kernels::layer_weight_bytes(plan.config, 0, false) == 344);
  CHECK(smelt::kernels::layer_weight_bytes(plan.config, 0, true) == 344 - 2 * 48);
  const std::size_t held = h.wqkv.size() + h.wo.size() + h.router.size() + h.expert_up.size() + h.expert_down.size() +
                           h.shared[0].up.size() + h.shared[0].down.size() + h.shared_gate.size();
  CHECK(2 * held == 344);
}

TEST_CASE("device weights: shapes that do not match the config are refused, named", "[kernels_host]") {
  const smelt::LayerPlan plan = tiny_plan();
  smelt::LayerWeights w = smelt::make_layer_weights(plan, 0, 42);
  smelt::LayerWeights fewer = w;
  fewer.experts.pop_back();
  CHECK_THROWS_WITH(smelt::kernels::to_host_layer(plan.config, false, 0, fewer),
                    "make_layer_weights: 2 experts, the config has 3");
  smelt::LayerWeights short_wk = w;
  short_wk.wk.pop_back();
  CHECK_THROWS_WITH(smelt::kernels::to_host_layer(plan.config, false, 0, short_wk),
                    "make_layer_weights: wk has 7 elements, the CUDA backend expects 8");
  w.experts[1].gate.clear();
  CHECK_THROWS_WITH(smelt::kernels::to_host_layer(plan.config, false, 0, w),
                    "make_layer_weights: expert gate has 0 elements, the CUDA backend expects 8");
}

TEST_CASE("timing: rotated input buffers", "[kernels_host]") {
  using smelt::kernels::rotation_count;
  CHECK(rotation_count(0, 50) == 3);
  CHECK(rotation_count(400u << 20, 60u << 20) == 3);  // 2 x 60 / 400 + 1 = 1, at least 3
  CHECK(rotation_count(10, 50) == 11);                // 2 x 50 / 10 + 1 = 11: 110 bytes > 100
  CHECK(rotation_count(7, 10) == 3);                  // 20 / 7 + 1 = 3: 21 > 20
  CHECK(rotation_count(5, 10) == 5);                  // 20 / 5 + 1 = 5: 25 > 20 (4 would only equal it)
}
