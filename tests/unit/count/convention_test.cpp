// Megatron-LM convention: megatron_flops() checked against an independent,
// literal transliteration of Megatron's transformer_flops()
// (megatron_reference.hpp), by hand, and against smelt's own count().
#include <catch2/catch.hpp>

#include <vector>

#include "megatron_reference.hpp"
#include "smelt/convention.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"

namespace {

using smelt::AttentionType;
using smelt::Convention;
using smelt::FfnType;
using smelt::LayerAttention;
using smelt::ModelConfig;
using smelt::test::megatron::d;
using smelt::test::megatron::i64;
using smelt::test::megatron::MegatronArgs;
using smelt::test::megatron::transformer_flops;

// megatron_flops() is per token; Megatron's total is for batch x seq_length tokens.
void require_matches_megatron(const ModelConfig& c, const MegatronArgs& args) {
  constexpr double batch = 4;
  const double ours = smelt::megatron_flops(c).training() * batch * d(args.seq_length);
  REQUIRE(ours == Approx(transformer_flops(args, batch)).epsilon(1e-12));
}

ModelConfig gqa_model(i64 layers, i64 hidden, i64 heads, i64 kv_heads, i64 head_dim, i64 vocab, i64 context) {
  ModelConfig c;
  c.name = "test";
  c.num_layers = layers;
  c.hidden_size = hidden;
  c.attention.num_heads = heads;
  c.attention.num_kv_heads = kv_heads;
  c.attention.head_dim = head_dim;
  c.vocab_size = vocab;
  c.context_length = context;
  return c;
}

MegatronArgs gqa_args(i64 layers, i64 hidden, i64 heads, i64 kv_heads, i64 head_dim, i64 vocab, i64 seq) {
  MegatronArgs a;
  a.num_layers = layers;
  a.hidden_size = hidden;
  a.num_attention_heads = heads;
  a.group_query_attention = true;
  a.num_query_groups = kv_heads;
  a.kv_channels = head_dim;
  a.padded_vocab_size = vocab;
  a.seq_length = seq;
  a.swiglu = true;
  return a;
}

// Llama-3-8B: dense GQA, SwiGLU.
ModelConfig llama3_8b() {
  ModelConfig c = gqa_model(32, 4096, 32, 8, 128, 128256, 8192);
  c.ffn.dense_width = 14336;
  return c;
}

// Mixtral-8x7B: every layer MoE, 8 experts, top-2.
ModelConfig mixtral() {
  ModelConfig c = gqa_model(32, 4096, 32, 8, 128, 32000, 32768);
  c.moe.num_experts = 8;
  c.moe.top_k = 2;
  c.moe.expert_width = 14336;
  return c;
}

// DeepSeek-MoE-16B shape with GQA: one dense layer first, 64 experts top-6, two shared experts.
ModelConfig deepseek_gqa() {
  ModelConfig c = gqa_model(28, 2048, 16, 4, 128, 102400, 4096);
  c.ffn.dense_width = 10944;
  c.moe.num_experts = 64;
  c.moe.top_k = 6;
  c.moe.expert_width = 1408;
  c.moe.num_shared_experts = 2;
  c.moe.shared_width = 1408;
  c.moe.first_dense = 1;
  return c;
}

MegatronArgs deepseek_gqa_args() {
  MegatronArgs a = gqa_args(28, 2048, 16, 4, 128, 102400, 4096);
  a.ffn_hidden_size = 10944;
  a.num_experts = 64;
  a.moe_router_topk = 6;
  a.moe_ffn_hidden_size = 1408;
  a.moe_shared_expert_intermediate_size = 2 * 1408;
  std::vector<i64> pattern(28, 1);
  pattern[0] = 0;
  a.moe_layer_freq = pattern;
  return a;
}

// DeepSeek-V3: MLA with a query latent, 3 dense layers, one shared expert, one MTP module.
ModelConfig deepseek_v3() {
  ModelConfig c;
  c.name = "deepseek-v3";
  c.num_layers = 61;
  c.hidden_size = 7168;
  c.vocab_size = 129280;
  c.context_length = 4096;
  c.attention.type = AttentionType::mla;
  c.attention.num_heads = 128;
  c.attention.mla = {1536, 512, 128, 64, 128};
  c.ffn.dense_width = 18432;
  c.moe.num_experts = 256;
  c.moe.top_k = 8;
  c.moe.expert_width = 2048;
  c.moe.num_shared_experts = 1;
  c.moe.shared_width = 2048;
  c.moe.first_dense = 3;
  c.mtp_modules = 1;
  return c;
}

MegatronArgs mla_args(const ModelConfig& c) {
  MegatronArgs a;
  a.num_layers = c.num_layers;
  a.hidden_size = c.hidden_size;
  a.num_attention_heads = c.attention.num_heads;
  a.multi_latent_attention = true;
  a.kv_lora_rank = c.attention.mla.kv_lora_rank;
  a.qk_head_dim = c.attention.mla.qk_nope_head_dim;
  a.qk_pos_emb_head_dim = c.attention.mla.qk_rope_head_dim;
  a.v_head_dim = c.attention.mla.v_head_dim;
  a.padded_vocab_size = c.vocab_size;
  a.seq_length = c.context_length;
  a.swiglu = true;
  return a;
}

}  // namespace

TEST_CASE("conventions read and write their words", "[convention]") {
  REQUIRE(smelt::to_string(Convention::smelt) == "smelt");
  REQUIRE(smelt::to_string(Convention::megatron) == "megatron");
  REQUIRE(smelt::parse_convention("smelt", "convention") == Convention::smelt);
  REQUIRE(smelt::parse_convention("megatron", "convention") == Convention::megatron);
  REQUIRE_THROWS_WITH(smelt::parse_convention("6N", "--convention"),
                      "--convention = \"6N\": must be one of smelt, megatron, torchtitan, flop-counter");
  REQUIRE_THROWS_AS(smelt::parse_convention("Megatron", "convention"), smelt::config_error);
}

TEST_CASE("megatron_flops rejects invalid configs and contexts", "[convention]") {
  ModelConfig bad = llama3_8b();
  bad.attention.num_kv_heads = 5;
  REQUIRE_THROWS_WITH(smelt::megatron_flops(bad), "attention.num_kv_heads = 5: must divide attention.num_heads = 32");
  REQUIRE_THROWS_WITH(smelt::megatron_flops(llama3_8b(), -1),
                      "context_length = -1: must be between 1 and 1073741824 tokens");
}

TEST_CASE("a tiny dense GQA model matches Megatron's formula worked by hand", "[convention]") {
  // H = 64, 2 layers, 4 heads of 16, 2 KV heads, seq 8, SwiGLU FFN 128, vocab 100.
  ModelConfig c = gqa_model(2, 64, 4, 2, 16, 100, 8);
  c.ffn.dense_width = 128;
  const auto m = smelt::megatron_flops(c);
  // Attention bracket per layer: q = 4*16 = 64, k = v = 2*16 = 32.
  //   qkv  64 * (64 + 32 + 32) = 8192;  core  64 * 8 / 2 * 2 = 512;  out  64 * 64 = 4096;  sum 12800.
  //   x 3 x 2 x 2 layers = 153600.
  REQUIRE(m.self_attention == 153600.0);
  // MLP: 3 x 2 x 64 x (128 x 3) x 2 layers = 294912.
  REQUIRE(m.dense_mlp == 294912.0);
  // Logits: 3 x 2 x 64 x 100 = 38400.
  REQUIRE(m.logits == 38400.0);
  REQUIRE(m.routed_experts == 0.0);
  REQUIRE(m.shared_experts == 0.0);
  REQUIRE(m.mtp == 0.0);
  REQUIRE(m.training() == 486912.0);
  REQUIRE(m.forward() == 162304.0);

  // smelt averages a causal token over (s + 1) / 2 = 4.5 earlier tokens, Megatron
  // over s / 2 = 4: scores + values differ by 2 x 64 x 0.5 x 2 = 128 a layer.
  // smelt per layer: qkv 2*64*128 = 16384, out 2*64*64 = 8192, scores = values = 2*64*4.5 = 576,
  // FFN 2*3*64*128 = 49152; 74880 x 2 layers + head 2*64*100 = 12800 gives 162560 = 162304 + 2 x 128.
  const auto s = smelt::count(c).flops;
  REQUIRE(s.forward == 162560.0);
  REQUIRE(s.forward - m.forward() == 256.0);
}

TEST_CASE("megatron_flops matches Megatron's transformer_flops for dense GQA and MHA", "[convention]") {
  SECTION("Llama-3-8B: GQA, SwiGLU") {
    MegatronArgs a = gqa_args(32, 4096, 32, 8, 128, 128256, 8192);
    a.ffn_hidden_size = 14336;
    require_matches_megatron(llama3_8b(), a);
  }
  SECTION("GPT-2 small: MHA, plain FFN, group_query_attention off") {
    ModelConfig c = gqa_model(12, 768, 12, 12, 64, 50257, 1024);
    c.ffn.type = FfnType::plain;
    c.ffn.dense_width = 3072;
    MegatronArgs a = gqa_args(12, 768, 12, 12, 64, 50257, 1024);
    a.group_query_attention = false;
    a.num_query_groups = 1;  // ignored: Megatron sets it to num_attention_heads
    a.swiglu = false;
    a.ffn_hidden_size = 3072;
    require_matches_megatron(c, a);
  }
  SECTION("a dense model with two MTP modules counts them as dense layers") {
    ModelConfig c = llama3_8b();
    c.mtp_modules = 2;
    MegatronArgs a = gqa_args(32, 4096, 32, 8, 128, 128256, 8192);
    a.ffn_hidden_size = 14336;
    a.mtp_num_layers = 2;
    require_matches_megatron(c, a);
  }
}

TEST_CASE("megatron_flops matches Megatron's transformer_flops for MoE models", "[convention]") {
  SECTION("Mixtral: ffn_hidden_size stands in for an unset moe_ffn_hidden_size") {
    MegatronArgs a = gqa_args(32, 4096, 32, 8, 128, 32000, 32768);
    a.num_experts = 8;
    a.moe_router_topk = 2;
    a.ffn_hidden_size = 14336;
    require_matches_megatron(mixtral(), a);
  }
  SECTION("DeepSeek-like with GQA: dense first layer, shared experts") {
    require_matches_megatron(deepseek_gqa(), deepseek_gqa_args());
  }
  SECTION("alternating MoE layers (integer moe_layer_freq) and an MTP module after a dense layer") {
    ModelConfig c = gqa_model(24, 1024, 8, 2, 128, 50000, 2048);
    c.ffn.dense_width = 2816;
    c.moe.num_experts = 16;
    c.moe.top_k = 2;
    c.moe.expert_width = 512;
    c.moe.every = 2;  // layers 0, 2, ..., 22 are MoE; the last (23) is dense
    c.mtp_modules = 1;
    MegatronArgs a = gqa_args(24, 1024, 8, 2, 128, 50000, 2048);
    a.ffn_hidden_size = 2816;
    a.num_experts = 16;
    a.moe_router_topk = 2;
    a.moe_ffn_hidden_size = 512;
    a.moe_layer_freq = i64{2};
    a.mtp_num_layers = 1;
    require_matches_megatron(c, a);
    // Megatron's MTP layer is dense here: 12 dense + 1 MTP = 13 dense layers.
    REQUIRE(smelt::megatron_flops(c).dense_mlp == 6.0 * 1024 * 2816 * 3 * 13);
  }
}

TEST_CASE("megatron_flops matches Megatron's transformer_flops for MLA", "[convention]") {
  SECTION("DeepSeek-V3: q_lora_rank set, one MTP module after an MoE layer") {
    const ModelConfig c = deepseek_v3();
    MegatronArgs a = mla_args(c);
    a.q_lora_rank = 1536;
    a.ffn_hidden_size = 18432;
    a.num_experts = 256;
    a.moe_router_topk = 8;
    a.moe_ffn_hidden_size = 2048;
    a.moe_shared_expert_intermediate_size = 2048;
    std::vector<i64> pattern(61, 1);
    pattern[0] = pattern[1] = pattern[2] = 0;
    a.moe_layer_freq = pattern;
    a.mtp_num_layers = 1;
    require_matches_megatron(c, a);

    const auto m = smelt::megatron_flops(c);
    // MTP: 3 x 2 x (3 x 7168 + 2 x 7168^2) = 616,691,712; logits twice (main head + MTP head).
    REQUIRE(m.mtp == 616691712.0);
    REQUIRE(m.logits == 2 * 6.0 * 7168 * 129280);
    // 58 MoE layers + the MTP layer.
    REQUIRE(m.routed_experts == 6.0 * 7168 * 2048 * 8 * 3 * 59);
  }
  SECTION("DeepSeek-V2-Lite: no q_lora_rank") {
    ModelConfig c;
    c.name = "deepseek-v2-lite";
    c.num_layers = 27;
    c.hidden_size = 2048;
    c.vocab_size = 102400;
    c.context_length = 4096;
    c.attention.type = AttentionType::mla;
    c.attention.num_heads = 16;
    c.attention.mla = {0, 512, 128, 64, 128};
    c.ffn.dense_width = 10944;
    c.moe.num_experts = 64;
    c.moe.top_k = 6;
    c.moe.expert_width = 1408;
    c.moe.num_shared_experts = 2;
    c.moe.shared_width = 1408;
    c.moe.first_dense = 1;
    MegatronArgs a = mla_args(c);
    a.ffn_hidden_size = 10944;
    a.num_experts = 64;
    a.moe_router_topk = 6;
    a.moe_ffn_hidden_size = 1408;
    a.moe_shared_expert_intermediate_size = 2816;
    std::vector<i64> pattern(27, 1);
    pattern[0] = 0;
    a.moe_layer_freq = pattern;
    require_matches_megatron(c, a);
    // One layer's bracket: q 2048*16*192 = 6291456; kv 512*(2048 + 16*256 + 1) = 3146240;
    // rope key 2048*64 = 131072; out 16*128*2048 = 4194304; core 4096*16*192/2 + 4096*16*128/2
    // = 6291456 + 4194304; sum 24248832, x 6 x 27 layers.
    REQUIRE(smelt::megatron_flops(c).self_attention == 6.0 * 24248832 * 27);
  }
}

TEST_CASE("Megatron's num_layers for a looped model is the executed depth", "[convention]") {
  // 12 layers, odd (0-based) layers MoE, layers 4-8 (1-based) run twice, one MTP module.
  ModelConfig c = gqa_model(12, 512, 8, 2, 64, 32000, 4096);
  c.ffn.dense_width = 1536;
  c.moe.num_experts = 32;
  c.moe.top_k = 4;
  c.moe.expert_width = 256;
  c.moe.every = 2;
  c.moe.phase = 1;
  c.loops = {{4, 8, 2, 1.0}};
  c.mtp_modules = 1;
  MegatronArgs a = gqa_args(17, 512, 8, 2, 64, 32000, 4096);
  a.ffn_hidden_size = 1536;
  a.num_experts = 32;
  a.moe_router_topk = 4;
  a.moe_ffn_hidden_size = 256;
  // Executed 0-based layers 0 1 2 | 3 4 5 6 7 | 3 4 5 6 7 | 8 9 10 11, MoE when odd.
  a.moe_layer_freq = std::vector<i64>{0, 1, 0, 1, 0, 1, 0, 1, 1, 0, 1, 0, 1, 0, 1, 0, 1};
  a.mtp_num_layers = 1;
  require_matches_megatron(c, a);
  // 9 MoE visits + the MTP layer (the last layer, 11, is MoE).
  REQUIRE(smelt::megatron_flops(c).routed_experts == 6.0 * 512 * 256 * 4 * 3 * 10);
}

TEST_CASE("Megatron ignores sliding windows and uses the requested context", "[convention]") {
  ModelConfig full = llama3_8b();
  ModelConfig sliding = full;
  sliding.attention.pattern = {LayerAttention::sliding, LayerAttention::full};
  sliding.attention.window = 128;
  REQUIRE(smelt::megatron_flops(sliding).training() == smelt::megatron_flops(full).training());
  REQUIRE(smelt::count(sliding).flops.forward < smelt::count(full).flops.forward);

  ModelConfig short_context = full;
  short_context.context_length = 1024;
  REQUIRE(smelt::megatron_flops(full, 1024).training() == smelt::megatron_flops(short_context).training());
  REQUIRE(smelt::megatron_flops(full, 0).training() == smelt::megatron_flops(full).training());
  // Only the core-attention term moves: 3 x 2 x 4096 x (8192 - 1024) / 2 x 2 x 32 layers.
  REQUIRE(smelt::megatron_flops(full).self_attention - smelt::megatron_flops(full, 1024).self_attention ==
          6.0 * 4096 * 7168 * 32);
}

TEST_CASE("Megatron and smelt differ only by causal averaging and the router", "[convention]") {
  SECTION("dense GQA: (s + 1) / 2 versus s / 2, i.e. 2 x heads x head_dim a layer") {
    const ModelConfig c = llama3_8b();
    const auto m = smelt::megatron_flops(c);
    const auto s = smelt::count(c).flops;
    // 32 layers x 2 x 32 x 128 = 262144.
    REQUIRE(m.forward() == 17156800512.0);
    REQUIRE(s.forward == 17156800512.0 + 262144.0);
    const auto& t = s.terms;
    REQUIRE(m.self_attention / 3 ==
            t.attention_qkv + t.attention_out + t.attention_scores + t.attention_values - 262144.0);
    REQUIRE(m.dense_mlp / 3 == t.dense_ffn);
    REQUIRE(m.logits / 3 == t.lm_head);
  }
  SECTION("Mixtral: plus 2 x H x E per MoE layer for the router") {
    const ModelConfig c = mixtral();
    const auto m = smelt::megatron_flops(c);
    const auto s = smelt::count(c).flops;
    // Causal: 32 x 2 x 32 x 128 = 262144; router: 32 x 2 x 4096 x 8 = 2097152.
    REQUIRE(m.forward() == 34085011456.0);
    REQUIRE(s.terms.router == 2097152.0);
    REQUIRE(s.forward - m.forward() == 262144.0 + 2097152.0);
    REQUIRE(m.routed_experts / 3 == s.terms.experts);
  }
  SECTION("DeepSeek-like GQA with shared experts and a dense first layer") {
    const ModelConfig c = deepseek_gqa();
    const auto m = smelt::megatron_flops(c);
    const auto s = smelt::count(c).flops;
    // Causal: 28 x 2 x 16 x 128 = 114688; router: 27 MoE layers x 2 x 2048 x 64 = 7077888.
    REQUIRE(m.forward() == 5347999744.0);
    REQUIRE(s.forward - m.forward() == 114688.0 + 7077888.0);
    REQUIRE(m.shared_experts / 3 == s.terms.shared_experts);
    REQUIRE(m.dense_mlp / 3 == s.terms.dense_ffn);
  }
}
