// Counts of small configs computed by hand (the arithmetic is in the comments
// and in docs/counting.md), and the laws counting must obey.
#include <catch2/catch.hpp>

#include "smelt/count.hpp"
#include "smelt/error.hpp"
#include "test_configs.hpp"

using namespace smelt;

TEST_CASE("the tiny MoE's parameters match the hand count", "[cost]") {
  const CostReport r = count(test::tiny_moe());
  // Attention per layer: Q 64*64 = 4096, K = V = 64*32 = 2048, O 4096 -> 12288.
  CHECK(r.layers[0].params.attention == 12288);
  // Layer 1 (dense): 12288 + norms 2*64 + FFN 3*64*128 = 24576 -> 36992.
  CHECK(r.layers[0].params.total() == 36992);
  // MoE layer: 12288 + 128 + router 64*8 = 512 + experts 8*3*64*32 = 49152 + shared 6144 -> 68224.
  CHECK(r.layers[1].params.total() == 68224);
  CHECK(r.params.terms.experts == 3 * 49152);
  // Total: 36992 + 3*68224 + final norm 64 + embedding 64000 + head 64000 = 369728.
  CHECK(r.params.total == 369728);
  CHECK(r.params.non_embedding == 241728);
  // Active MoE layer: 12288 + 128 + 512 + 2*6144 + 6144 = 31360;
  // active non-embedding: 36992 + 3*31360 + 64 = 131136.
  CHECK(r.params.active_non_embedding == 131136);
  CHECK(r.params.active == 131136 + 128000);
}

TEST_CASE("the tiny MoE's FLOPs follow the schedule 1,2,3,2,3,4", "[cost]") {
  const CostReport r = count(test::tiny_moe());
  CHECK(r.executed_layers == 6);
  // Per visit: QKV 2*8192 = 16384, O 2*4096 = 8192, scores = values = 2*64*(8+1)/2 = 576.
  CHECK(r.layers[1].flops_per_visit.attention_qkv == 16384);
  CHECK(r.layers[1].flops_per_visit.attention_scores == 576);
  CHECK(r.flops.terms.attention_qkv == 6 * 16384);
  CHECK(r.flops.terms.attention_values == 6 * 576);
  // Dense layer once: 2*24576; MoE visits 2,3,2,3,4: router 2*64*8 = 1024,
  // experts 2*2*6144 = 24576, shared 2*6144 = 12288, each five times.
  CHECK(r.flops.terms.dense_ffn == 49152);
  CHECK(r.flops.terms.router == 5 * 1024);
  CHECK(r.flops.terms.experts == 5 * 24576);
  CHECK(r.flops.terms.shared_experts == 5 * 12288);
  CHECK(r.flops.terms.lm_head == 128000);  // 2*64*1000
  // 6*25728 + 49152 + 5*37888 + 128000 = 520960.
  CHECK(r.flops.forward == 520960);
  CHECK(r.flops.forward_non_embedding() == 392960);
  CHECK(r.flops.training == 3 * 520960);
}

TEST_CASE("the tiny MoE's KV cache counts each visit with KV heads", "[cost]") {
  const CostReport r = count(test::tiny_moe());
  // 2 (K and V) * 2 KV heads * 16 = 64 elements, 128 bytes, per visit; 6 visits.
  CHECK(r.layers[0].kv_elements_per_visit == 64);
  CHECK(r.kv.bytes_per_token == 768);
  CHECK(r.kv.elements_per_token == 384);
  CHECK(r.kv.bytes_at_context == 768 * 8);
}

TEST_CASE("sliding and chunked layers attend to the exact average and cache at most their span", "[cost]") {
  ModelConfig c = test::tiny_dense(2);
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked};
  c.attention.window = 3;
  c.attention.chunk = 3;
  const CostReport r = count(c);
  // Sliding, T = 8, W = 3: positions attend 1,2,3,3,3,3,3,3 = 21 tokens; 2*64*21/8 = 336.
  CHECK(r.layers[0].flops_per_visit.attention_scores == Approx(336.0).epsilon(1e-15));
  // Chunked, C = 3: 1,2,3,1,2,3,1,2 = 15 tokens; 2*64*15/8 = 240.
  CHECK(r.layers[1].flops_per_visit.attention_scores == Approx(240.0).epsilon(1e-15));
  // Each holds 3 tokens of 64 elements: 2 layers * 3 * 64 * 2 bytes / 8 tokens = 96 bytes per token.
  CHECK(r.layers[0].kv_tokens_held == 3);
  CHECK(r.kv.bytes_per_token == 96);
}

TEST_CASE("MLA counts its low-rank projections and caches the latent plus the rope key", "[cost]") {
  ModelConfig c = test::tiny_dense(1);
  c.attention.type = AttentionType::mla;
  c.attention.mla = {32, 16, 8, 4, 8};  // q_lora, kv_lora, nope, rope, v
  const CostReport r = count(c);
  // Q: 64*32 + 32*4*(8+4) = 3584, q norm 32; KV down 64*(16+4) = 1280, kv norm 16;
  // KV up 16*4*(8+8) = 1024; O 4*8*64 = 2048. Params 3584+1280+1024+2048+48 = 7984.
  CHECK(r.layers[0].params.attention == 7984);
  CHECK(r.layers[0].flops_per_visit.attention_qkv == 2 * (3584 + 1280 + 1024));
  CHECK(r.layers[0].flops_per_visit.attention_out == 2 * 2048);
  // Scores 2*4*12*4.5 = 432, values 2*4*8*4.5 = 288 (T = 8: mean 4.5 tokens attended).
  CHECK(r.layers[0].flops_per_visit.attention_scores == 432);
  CHECK(r.layers[0].flops_per_visit.attention_values == 288);
  // Cache: kv_lora_rank + rope = 20 elements, 40 bytes; never full K and V.
  CHECK(r.kv.bytes_per_token == 40);
}

TEST_CASE("biases, sinks, QK-norm and LayerNorm add their parameters", "[cost]") {
  ModelConfig c = test::tiny_dense(1);
  const std::int64_t base = count(c).layers[0].params.total();
  c.attention.qkv_bias = true;             // 64 + 2*32
  c.attention.out_bias = true;             // 64
  c.attention.sinks = true;                // 4
  c.attention.qk_norm = QkNorm::per_head;  // 2*16
  c.ffn.bias = true;                       // gated: 2*128 + 64
  CHECK(count(c).layers[0].params.total() == base + 128 + 64 + 4 + 32 + 320);
  c.norm = NormType::layernorm;  // every norm doubles: 2*64 + 2*16
  CHECK(count(c).layers[0].params.total() == base + 128 + 64 + 4 + 32 + 320 + 128 + 32);
}

TEST_CASE("tied embeddings drop the head's parameters but not its FLOPs", "[cost]") {
  ModelConfig c = test::tiny_dense(2);
  c.tie_embeddings = true;
  const CostReport r = count(c);
  CHECK(r.params.lm_head == 0);
  CHECK(r.params.total == r.params.non_embedding + 64000);
  CHECK(r.flops.terms.lm_head == 128000);
}

TEST_CASE("counts are linear in the number of layers", "[cost][law]") {
  const CostReport one = count(test::tiny_dense(1));
  for (std::int64_t layers : {2, 5, 13}) {
    const CostReport r = count(test::tiny_dense(layers));
    const auto per_layer = one.params.non_embedding - 64;  // minus the final norm
    CHECK(r.params.non_embedding == layers * per_layer + 64);
    CHECK(r.flops.forward_non_embedding() == Approx(static_cast<double>(layers) * one.flops.forward_non_embedding()));
    CHECK(r.kv.bytes_per_token == static_cast<double>(layers) * one.kv.bytes_per_token);
  }
}

TEST_CASE("looping a span r times multiplies its FLOPs and KV cache by r and its parameters by 1", "[cost][law]") {
  ModelConfig c = test::tiny_moe();
  c.loops = {};
  const CostReport flat = count(c);
  const double span_flops = flat.layers[1].flops_per_visit.forward() + flat.layers[2].flops_per_visit.forward();
  const double span_kv = flat.layers[1].kv_bytes_per_visit + flat.layers[2].kv_bytes_per_visit;
  for (std::int64_t r : {2, 3, 4}) {
    c.loops = {{2, 3, r, 1.0 / static_cast<double>(r)}};
    const CostReport looped = count(c);
    CHECK(looped.params.total == flat.params.total);
    CHECK(looped.params.active == flat.params.active);
    CHECK(looped.flops.forward == Approx(flat.flops.forward + static_cast<double>(r - 1) * span_flops));
    CHECK(looped.kv.bytes_per_token == flat.kv.bytes_per_token + static_cast<double>(r - 1) * span_kv);
    CHECK(looped.executed_layers == 4 + 2 * (r - 1));
  }
}

TEST_CASE("routed expert FLOPs scale with top-k, not with the expert count", "[cost][law]") {
  ModelConfig c = test::tiny_moe();
  const double experts = count(c).flops.terms.experts;
  c.moe.num_experts = 64;
  CHECK(count(c).flops.terms.experts == experts);
  c.moe.top_k = 4;
  CHECK(count(c).flops.terms.experts == 2 * experts);
}

TEST_CASE("the elementwise option adds its own term and leaves the others alone", "[cost]") {
  const ModelConfig c = test::tiny_dense(1);
  const CostReport plain = count(c);
  const CostReport with = count(c, {.elementwise = true});
  CHECK(plain.flops.terms.elementwise == 0);
  // Norms 4*(2*64) + residual adds 2*64 + softmax 5*4*4.5 + SwiGLU 5*128 + final norm 4*64.
  CHECK(with.flops.terms.elementwise == 512 + 128 + 90 + 640 + 256);
  CHECK(with.flops.forward == plain.flops.forward + with.flops.terms.elementwise);
}

TEST_CASE("a context override changes attention FLOPs and KV cache only", "[cost]") {
  const ModelConfig c = test::tiny_dense(1);
  const CostReport r = count(c, {.context_length = 16});
  CHECK(r.context_length == 16);
  CHECK(r.layers[0].flops_per_visit.attention_scores == 2 * 64 * 8.5);
  CHECK(r.params.total == count(c).params.total);
}

TEST_CASE("MTP modules are reported apart and count in training FLOPs only", "[cost]") {
  ModelConfig c = test::tiny_dense(2);
  const CostReport base = count(c);
  c.mtp_modules = 1;
  const CostReport r = count(c);
  // One module: norms 3*64, projection 2*64*64 = 8192, one dense layer.
  CHECK(r.params.mtp == 192 + 8192 + base.layers[1].params.total());
  CHECK(r.params.total == base.params.total);
  CHECK(r.flops.forward == base.flops.forward);
  CHECK(r.flops.terms.mtp == 2 * 8192 + base.layers[1].flops_per_visit.forward() + 128000);
  CHECK(r.flops.training == 3 * (r.flops.forward + r.flops.terms.mtp));
}

TEST_CASE("the exact integer FLOPs agree with the reported per-token terms", "[cost]") {
  for (ModelConfig c : {test::tiny_moe(), test::mixtral_8x7b(), test::olmoe_1b_7b()}) {
    c.attention.pattern = {LayerAttention::sliding, LayerAttention::full};
    c.attention.window = 5;
    const CostReport r = count(c);
    for (const auto& l : r.layers) {
      const FlopTerms& f = l.flops_per_visit;
      CHECK(static_cast<double>(l.matmul_flops_per_visit) ==
            f.attention_qkv + f.attention_out + f.router + f.experts + f.shared_experts + f.dense_ffn);
      CHECK(static_cast<double>(l.score_flops_per_pair) * static_cast<double>(l.attended_pairs) /
                static_cast<double>(r.context_length) ==
            Approx(f.attention_scores + f.attention_values).epsilon(1e-15));
    }
  }
  // Tiny MoE, MoE layer: 2*(8192 + 4096) + 1024 + 24576 + 12288 = 62464; pairs 8*9/2 = 36; 2*(64 + 64) = 256.
  const CostReport tiny = count(test::tiny_moe());
  const LayerCost& l = tiny.layers[1];
  CHECK(l.matmul_flops_per_visit == 62464);
  CHECK(l.attended_pairs == 36);
  CHECK(l.score_flops_per_pair == 256);
}

TEST_CASE("a deep loop counts each layer once times its visits", "[cost]") {
  ModelConfig c = test::tiny_dense(65536);
  c.loops = {{1, 65536, 1024, 1.0 / 1024}};
  const CostReport r = count(c);  // once 67M listed visits (1.2 GB); now 65536 layers
  CHECK(r.executed_layers == 67'108'864);
  // Per visit: QKV 16384 + O 8192 + scores 576 + values 576 + FFN 2*3*64*128 = 49152 -> 74880;
  // x 2^26 visits = 5,025,111,736,320 (exact in a double).
  CHECK(r.flops.forward_non_embedding() == 5'025'111'736'320.0);
  CHECK(r.flops.terms.attention_scores == 576.0 * 67'108'864);
  // 2 x 2 KV heads x 16 x 2 bytes = 128 bytes per visit: 2^33 bytes per token.
  CHECK(r.kv.bytes_per_token == 8'589'934'592.0);
}

TEST_CASE("two spans with their own counts: FLOPs and KV per visit, parameters once (by hand)", "[cost]") {
  ModelConfig c = test::tiny_dense(6);  // H = 64, 4 heads / 2 KV heads of 16, FFN 128, vocab 1000, context 8
  c.loops = {{1, 2, 2, 0.5}, {4, 6, 3, 1.0 / 3}};
  const CostReport r = count(c);
  // executed: 6 + 2 x (2 - 1) + 3 x (3 - 1) = 14 visits
  CHECK(r.executed_layers == 14);
  // one visit per token: QKV 2 x 64 x (64 + 2 x 32) = 16,384; out 2 x 64 x 64 = 8,192;
  // FFN 2 x 3 x 64 x 128 = 49,152; scores and values 2 x 64 x 4.5 each (4.5 = 36 / 8 keys) = 1,152
  CHECK(r.layers[0].flops_per_visit.forward() == 74'880.0);
  CHECK(r.flops.forward == 14 * 74'880.0 + 2 * 64 * 1000);  // 1,048,320 + the LM head's 128,000
  // KV: 2 x 2 x 16 = 64 elements a visit, 2 bytes each: 128 bytes x 14 visits x 8 tokens
  CHECK(r.kv.bytes_at_context == 14'336);
  CHECK(r.kv.bytes_per_token == 1'792.0);
  // parameters: 6 x (12,288 attention + 128 norms + 24,576 FFN) + 64 final norm + 2 x 64,000
  CHECK(r.params.total == 350'016);
  CHECK(r.layers[1].visits == 2);
  CHECK(r.layers[2].visits == 1);
  CHECK(r.layers[5].visits == 3);
}
