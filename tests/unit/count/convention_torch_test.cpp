// torchtitan's and PyTorch FlopCounterMode's conventions: torchtitan_flops()
// and flop_counter_flops() against torchtitan's published Qwen3-30B-A3B
// figure, against FlopCounterMode run on real Hugging Face forwards
// (tests/data/flop_counter), and by hand on tiny configs.
#include <catch2/catch.hpp>

#include <string>

#include "hf_test_helpers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/convention.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

namespace {

using smelt::Convention;
using smelt::LayerAttention;
using smelt::ModelConfig;

// 2 layers, H = 64, 4 query / 2 key-value heads of 16, gated FFN of 128,
// V = 100, untied head, T = 8.
ModelConfig torch_tiny() {
  ModelConfig c = smelt::test::tiny_dense(2);
  c.name = "tiny";
  c.vocab_size = 100;
  return c;
}

std::string flop_counter_data(const char* name) {
  return std::string(SMELT_SOURCE_DIR "/tests/data/flop_counter/") + name;
}

}  // namespace

TEST_CASE("the conventions parse by their CLI names", "[convention]") {
  REQUIRE(smelt::parse_convention("torchtitan", "--convention") == Convention::torchtitan);
  REQUIRE(smelt::parse_convention("flop-counter", "--convention") == Convention::flop_counter);
  REQUIRE(smelt::to_string(Convention::flop_counter) == "flop-counter");
  REQUIRE_THROWS_WITH(smelt::parse_convention("flopcounter", "--convention"),
                      "--convention = \"flopcounter\": must be one of smelt, megatron, torchtitan, flop-counter");
}

TEST_CASE("torchtitan reproduces its 37,578,559,488 FLOPs per token for Qwen3-30B-A3B at seq 8192", "[convention]") {
  const ModelConfig c = smelt::read_config(smelt::test::example_path("qwen3-30b-a3b.json"));
  const smelt::TorchtitanFlops t = smelt::torchtitan_flops(c, 8192);
  // Attention: 12 x layers x heads x head_dim x seq = 12 * 48 * 32 * 128 * 8192 = 19,327,352,832
  // (torchtitan's 6 x n_layers x n_heads x (128 + 128) x seq).
  REQUIRE(t.attention == 19'327'352'832.0);
  // The rest, 37,578,559,488 - 19,327,352,832 = 18,251,206,656 = 6 x 3,041,867,776 parameters:
  // per layer attention 2048 * (4096 + 2 * 512) + 4096 * 2048 = 18,874,368, q/k norms 2 * 128,
  // norms 2 * 2048, router 2048 * 128 = 262,144, top-8 experts 8 * 3 * 2048 * 768 = 37,748,736:
  // 56,889,600; x 48 = 2,730,700,800; + final norm 2048 + output head 151,936 * 2048 = 311,164,928.
  // Only the input embedding is left out: the head counts.
  REQUIRE(t.params == 3'041'867'776);
  REQUIRE(t.training() == 37'578'559'488.0);
  REQUIRE(t.forward() == 12'526'186'496.0);  // / 3
}

TEST_CASE("torchtitan charges a tied Qwen3-MoE head's matrix product: 6 x 311,164,928 more than without it",
          "[convention]") {
  ModelConfig c = smelt::read_config(smelt::test::example_path("qwen3-30b-a3b.json"));
  c.tie_embeddings = true;
  const smelt::TorchtitanFlops t = smelt::torchtitan_flops(c, 8192);
  // get_nparams_and_active_nparams() weighs an embedding by 0 unless the head shares it: tied, the
  // 151,936 x 2048 = 311,164,928 table is the head and counts once, so the count is the untied one,
  // 3,041,867,776 (the test above), and training 37,578,559,488 at seq 8192.
  REQUIRE(t.params == 3'041'867'776);
  REQUIRE(t.training() == 37'578'559'488.0);
  // Without the head (torchtitan before PR #3225): 3,041,867,776 - 311,164,928 = 2,730,702,848
  // parameters; the difference is 6 x 311,164,928 = 1,866,989,568 FLOPs per token.
  const smelt::CostReport r = smelt::count(c);
  REQUIRE(r.params.active_non_embedding == 2'730'702'848);
  REQUIRE(t.training() - 6.0 * 2'730'702'848.0 - t.attention == 1'866'989'568.0);
}

TEST_CASE("torchtitan reproduces its gpt-oss figures at seq 4096: sliding layers attend their window", "[convention]") {
  // torchtitan PR #4300 (2026-08) lists num_flops_per_token 24,141,260,160 for gpt_oss:20b and
  // 34,534,221,696 for gpt_oss:120b; the attention difference it reports for 20b, 2,340,421,632 =
  // 12 sliding layers x 49,152 x (4096 - 128), fixes the sequence at 4096.
  const ModelConfig c = smelt::read_config(smelt::test::example_path("gpt-oss-20b.json"));
  const smelt::TorchtitanFlops t = smelt::torchtitan_flops(c, 4096);
  // quadratic_attention_flops_per_token per layer, 6 x 64 heads x (64 + 64) = 49,152 per attended token:
  // 12 full layers x 4096 + 12 sliding layers x min(4096, 128) = 50,688 tokens; 49,152 x 50,688 =
  // 2,491,416,576 (every layer at 4096 would be 4,831,838,208).
  REQUIRE(t.attention == 2'491'416'576.0);
  REQUIRE(t.params == 3'608'307'264);  // active 3,029,173,824 without embedding + head 201,088 x 2880
  REQUIRE(t.training() == 24'141'260'160.0);
  const ModelConfig big = smelt::read_config(smelt::test::example_path("gpt-oss-120b.json"));
  REQUIRE(smelt::torchtitan_flops(big, 4096).training() == 34'534'221'696.0);
}

TEST_CASE("torchtitan by hand: a tiny dense model, tied and looped", "[convention]") {
  ModelConfig c = torch_tiny();
  // Per layer: attention 64 * (64 + 2 * 32) + 64 * 64 = 12,288, norms 128, FFN 3 * 64 * 128 = 24,576:
  // 36,992. Two layers 73,984 + final norm 64 + head 100 * 64 = 6,400: 80,448 (embedding left out).
  smelt::TorchtitanFlops t = smelt::torchtitan_flops(c);
  REQUIRE(t.params == 80'448);
  REQUIRE(t.parameters == 482'688.0);  // 6 * 80,448
  REQUIRE(t.attention == 12'288.0);    // 6 * 2 layers * 4 heads * (16 + 16) * 8
  REQUIRE(t.training() == 494'976.0);
  REQUIRE(smelt::torchtitan_flops(c, 16).attention == 24'576.0);  // linear in seq, no causal halving

  // Tied: the head is the embedding's tensor, still multiplied, so it stays (torchtitan since PR #3225):
  // the same 80,448, not 80,448 - 6,400 = 74,048.
  c.tie_embeddings = true;
  REQUIRE(smelt::torchtitan_flops(c).params == 80'448);

  // Looped: 4 layers, layers 2-3 twice. Parameters once (4 * 36,992 + 64 + 6,400 = 154,432), the
  // attention term over the 6 executed layers: 6 * 6 * 4 * 32 * 8 = 36,864.
  c = torch_tiny();
  c.num_layers = 4;
  c.loops = {{2, 3, 2, 0.5}};
  t = smelt::torchtitan_flops(c);
  REQUIRE(t.params == 154'432);
  REQUIRE(t.attention == 36'864.0);
}

TEST_CASE("torchtitan counts routed experts at top_k / num_experts and MLA heads as qk + v", "[convention]") {
  ModelConfig c = torch_tiny();
  c.moe.num_experts = 4;
  c.moe.top_k = 2;
  c.moe.expert_width = 32;
  c.moe.num_shared_experts = 1;
  c.moe.shared_width = 16;
  // Per layer: attention 12,288 + norms 128 + router 64 * 4 = 256 + shared 3 * 64 * 16 = 3,072 +
  // experts 4 * 3 * 64 * 32 = 24,576 x 2 / 4 = 12,288: 28,032; x 2 + 64 + 6,400 = 62,528.
  REQUIRE(smelt::torchtitan_flops(c).params == 62'528);

  ModelConfig m = torch_tiny();
  m.attention.type = smelt::AttentionType::mla;
  m.attention.num_kv_heads = 0;
  m.attention.head_dim = 0;
  m.attention.mla = {0, 32, 16, 8, 16};
  // head_dims = 16 + 8 + 16 = 40: 6 * 2 * 4 * 40 * 8.
  REQUIRE(smelt::torchtitan_flops(m).attention == 15'360.0);
}

TEST_CASE("flop-counter by hand: full T x T attention on every layer, nothing elementwise", "[convention]") {
  ModelConfig c = torch_tiny();
  // Per layer per token: QKV 2 * 64 * (64 + 64) = 16,384, O 2 * 64 * 64 = 8,192, FFN 2 * 3 * 64 * 128
  // = 49,152, Q K^T 2 * 64 * T = 1,024 and softmax · V 1,024 at T = 8 (not the causal (T + 1) / 2):
  // 75,776. Two layers 151,552 + head 2 * 64 * 100 = 12,800: 164,352; one forward of 8 tokens
  // 8 * 164,352 = 1,314,816.
  const smelt::FlopCounterFlops f = smelt::flop_counter_flops(c);
  REQUIRE(f.per_token.attention_scores == 2'048.0);
  REQUIRE(f.per_token.attention_values == 2'048.0);
  REQUIRE(f.forward_per_token() == 164'352.0);
  REQUIRE(f.forward_per_sequence() == 1'314'816.0);
  REQUIRE(f.per_token.elementwise == 0.0);

  // A sliding window masks after the product: FlopCounterMode still counts T x T.
  c.attention.pattern = {LayerAttention::sliding};
  c.attention.window = 3;
  REQUIRE(smelt::flop_counter_flops(c).forward_per_token() == 164'352.0);
  REQUIRE(smelt::count(c).flops.forward < 164'352.0);  // smelt's own count sees the window

  // Looped: layers 2-3 of 4 twice, six visits of 75,776: 454,656 + 12,800.
  c = torch_tiny();
  c.num_layers = 4;
  c.loops = {{2, 3, 2, 0.5}};
  REQUIRE(smelt::flop_counter_flops(c).forward_per_token() == 467'456.0);
}

// tests/data/flop_counter/*.flops.json hold FlopCounterMode's totals for one forward of 16 tokens,
// measured by tests/flop_counter/measure.py with torch 2.15.0 and transformers 5.24.0 on the
// configs beside them; the same total under eager and sdpa attention.
TEST_CASE("flop-counter equals FlopCounterMode on Hugging Face forwards to the integer", "[convention]") {
  // Llama, H = 64, 4 heads of 24 (not 64 / 4), 2 KV heads, FFN 96, V = 100, 2 layers, T = 16:
  // per layer per token 2 * 64 * 192 + 2 * 96 * 64 + 2 * 3 * 64 * 96 + 2 * 2 * 96 * 16 = 79,872;
  // x 2 + head 2 * 64 * 100 = 172,544; x 16 tokens = 2,760,704.
  const ModelConfig llama = smelt::read_config(flop_counter_data("llama-tiny.config.json"));
  REQUIRE(smelt::flop_counter_flops(llama, 16).forward_per_sequence() == 2'760'704.0);

  // Mixtral, H = 48, 4 heads of 16, 2 KV heads, 4 experts of 40, top-2, V = 90 (tied), T = 16:
  // per layer per token 2 * 48 * 128 + 2 * 64 * 48 + router 2 * 48 * 4 + experts 2 * 2 * 3 * 48 * 40
  // + 2 * 2 * 64 * 16 = 45,952; x 2 + head 2 * 48 * 90 = 100,544; x 16 = 1,608,704. That is
  // FlopCounterMode with experts_implementation "eager" or "batched_mm"; with transformers 5.x's
  // default "grouped_mm" it measures 871,424 = 1,608,704 - 16 * 2 * 23,040, the experts uncounted
  // (torch's flop counter has no formula for grouped matrix products).
  const ModelConfig mixtral = smelt::read_config(flop_counter_data("mixtral-tiny.config.json"));
  const smelt::FlopCounterFlops f = smelt::flop_counter_flops(mixtral, 16);
  REQUIRE(f.forward_per_sequence() == 1'608'704.0);
  REQUIRE(f.forward_per_sequence() - 16 * f.per_token.experts == 871'424.0);

  // DeepSeek-V3 (MLA), H = 40, 4 heads, q latent 20, kv latent 12, nope 8, rope 4, v 6, 3 layers (the
  // first dense, FFN 56), 6 experts of 24, top-2, one shared expert, V = 80, T = 16, per token:
  // projections 3 * 2 * (40 * 20 + 20 * 4 * 12 + 40 * 16 + 12 * 4 * 14 + 4 * 6 * 40) = 24,192;
  // attention 3 * 2 * 16 * (4 * 12 + 4 * 6) = 6,912; router 2 * 2 * 40 * 6 = 960; experts
  // 2 * 2 * 2 * 3 * 40 * 24 = 23,040; shared 2 * 2 * 3 * 40 * 24 = 11,520; dense 2 * 3 * 40 * 56 = 13,440;
  // head 2 * 40 * 80 = 6,400: 86,464; x 16 = 1,383,424 (grouped_mm: 1,014,784, the routed experts uncounted).
  const ModelConfig deepseek = smelt::read_config(flop_counter_data("deepseek-v3-tiny.config.json"));
  const smelt::FlopCounterFlops g = smelt::flop_counter_flops(deepseek, 16);
  REQUIRE(g.forward_per_sequence() == 1'383'424.0);
  REQUIRE(g.forward_per_sequence() - 16 * g.per_token.experts == 1'014'784.0);
}
