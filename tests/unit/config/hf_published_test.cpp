// Hugging Face config.json import, examples with standard attention (MHA or
// GQA): Mixtral, OLMoE, Qwen1.5-MoE, Qwen3-MoE, DBRX and Llama 3.1 each import
// to exactly the sizes of the real model and reproduce the published parameter
// counts, saying which convention does (see hf_test_helpers.hpp).
#include <catch2/catch.hpp>

#include "hf_test_helpers.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"

using namespace smelt;
using namespace smelt::test;

TEST_CASE("Mixtral-8x7B imports with its published sizes and reproduces 46.7B total and 12.9B active", "[hf_import]") {
  const ModelConfig c = read_config(example_path("mixtral-8x7b.json"));
  ModelConfig e;
  e.name = "mixtral";
  e.vocab_size = 32000;
  e.num_layers = 32;
  e.hidden_size = 4096;
  e.context_length = 32768;
  e.attention.num_heads = 32;
  e.attention.num_kv_heads = 8;
  e.attention.head_dim = 128;
  e.moe.num_experts = 8;
  e.moe.top_k = 2;
  e.moe.expert_width = 14336;
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);

  const CostReport r = count(c);
  // Per layer: attention 4096*(4096 + 2*1024) + 4096*4096 = 41,943,040; experts 8*3*4096*14336 =
  // 1,409,286,144; router 4096*8 = 32,768; norms 2*4096 = 8,192 -> 1,451,270,144. Times 32 =
  // 46,440,644,608, plus final norm 4,096 and untied embedding + head 2*32000*4096 = 262,144,000.
  CHECK(r.params.total == 46'702'792'704);
  CHECK(r.params.total == Approx(46.7e9).epsilon(0.005));
  // Active, convention params.active (embedding and head included): attention 41,943,040 + 2 experts
  // 352,321,536 + router 32,768 + norms 8,192 = 394,305,536 per layer; x32 + 4,096 = 12,617,781,248
  // (active_non_embedding: "12.6B", does not reproduce) + 262,144,000 = 12,879,925,248 -> "12.9B".
  CHECK(r.params.active_non_embedding == 12'617'781'248);
  CHECK(r.params.active == 12'879'925'248);
  CHECK(rounds_to(r.params.active, 12.9e9, 0.1e9));
  CHECK_FALSE(rounds_to(r.params.active_non_embedding, 12.9e9, 0.1e9));
}

TEST_CASE("OLMoE-1B-7B-0924 imports with its published sizes and reproduces 6.9B total and 1.3B active",
          "[hf_import]") {
  const ModelConfig c = read_config(example_path("olmoe-1b-7b-0924.json"));
  ModelConfig e;
  e.name = "olmoe";
  e.vocab_size = 50304;
  e.num_layers = 16;
  e.hidden_size = 2048;
  e.context_length = 4096;
  e.attention.num_heads = 16;
  e.attention.num_kv_heads = 16;
  e.attention.head_dim = 128;
  e.attention.qk_norm = QkNorm::full;
  e.moe.num_experts = 64;
  e.moe.top_k = 8;
  e.moe.expert_width = 1024;
  e.moe.renormalize = false;  // norm_topk_prob false
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);

  const CostReport r = count(c);
  // Per layer: attention 4*2048*2048 = 16,777,216; QK-norm over all heads (2048 + 2048) = 4,096; experts
  // 64*3*2048*1024 = 402,653,184; router 2048*64 = 131,072; norms 4,096 -> 419,569,664. Times 16 =
  // 6,713,114,624, plus final norm 2,048 and untied embedding + head 2*50304*2048 = 206,045,184.
  CHECK(r.params.total == 6'919'161'856);
  CHECK(r.params.total == Approx(6.9e9).epsilon(0.005));
  // Active, convention params.active: 16,777,216 + 4,096 + 8*6,291,456 + 131,072 + 4,096 = 67,248,128 per
  // layer; x16 + 2,048 = 1,075,972,096 (active_non_embedding: "1.1B", does not reproduce) + 206,045,184 =
  // 1,282,017,280 -> "1.3B".
  CHECK(r.params.active_non_embedding == 1'075'972'096);
  CHECK(r.params.active == 1'282'017'280);
  CHECK(rounds_to(r.params.active, 1.3e9, 0.1e9));
}

TEST_CASE("Qwen1.5-MoE-A2.7B imports with a gated shared expert and reproduces 14.3B total and 2.7B active",
          "[hf_import]") {
  const ModelConfig c = read_config(example_path("qwen1.5-moe-a2.7b.json"));
  ModelConfig e;
  e.name = "qwen2_moe";
  e.vocab_size = 151936;
  e.num_layers = 24;
  e.hidden_size = 2048;
  e.context_length = 8192;
  e.attention.num_heads = 16;
  e.attention.num_kv_heads = 16;
  e.attention.head_dim = 128;
  e.attention.qkv_bias = true;
  e.ffn.dense_width = 5632;
  e.moe.num_experts = 60;
  e.moe.top_k = 4;
  e.moe.expert_width = 1408;
  e.moe.num_shared_experts = 1;
  e.moe.shared_width = 5632;
  e.moe.shared_gate = true;
  e.moe.renormalize = false;  // norm_topk_prob false
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);

  const CostReport r = count(c);
  CHECK(r.params.total == 14'315'784'192);
  CHECK(r.params.total == Approx(14.3e9).epsilon(0.005));
  // Convention params.active: 2,689,173,504 -> "2.7B". Qwen's "2.0B non-embedding activated" is
  // active_non_embedding = 2,066,843,648 truncated.
  CHECK(r.params.active == 2'689'173'504);
  CHECK(rounds_to(r.params.active, 2.7e9, 0.1e9));
  CHECK(truncates_to(r.params.active_non_embedding, 2.0e9, 0.1e9));
}

TEST_CASE("Qwen3-30B-A3B imports with per-head QK-norm and reproduces 30.5B total and 3.3B active", "[hf_import]") {
  const ModelConfig c = read_config(example_path("qwen3-30b-a3b.json"));
  ModelConfig e;
  e.name = "qwen3_moe";
  e.vocab_size = 151936;
  e.num_layers = 48;
  e.hidden_size = 2048;
  e.context_length = 40960;
  e.attention.num_heads = 32;
  e.attention.num_kv_heads = 4;
  e.attention.head_dim = 128;
  e.attention.qk_norm = QkNorm::per_head;
  e.ffn.dense_width = 6144;
  e.moe.num_experts = 128;
  e.moe.top_k = 8;
  e.moe.expert_width = 768;
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);

  const CostReport r = count(c);
  CHECK(r.params.total == 30'532'122'624);
  CHECK(r.params.total == Approx(30.5e9).epsilon(0.005));
  CHECK(r.params.non_embedding == 29'909'792'768);  // the model card's "29.9B non-embedding"
  // Convention params.active: 3,353,032,704, which the model card's "3.3B" truncates (rounding would give
  // 3.4B; active_non_embedding 2.73B and active_non_embedding + head 3.04B do not reproduce at all).
  CHECK(r.params.active == 3'353'032'704);
  CHECK(truncates_to(r.params.active, 3.3e9, 0.1e9));
}

TEST_CASE("DBRX imports from its own key names and reproduces 132B total and 36B active", "[hf_import]") {
  const ModelConfig c = read_config(example_path("dbrx.json"));
  ModelConfig e;
  e.name = "dbrx";
  e.vocab_size = 100352;
  e.num_layers = 40;
  e.hidden_size = 6144;
  e.norm = NormType::rmsnorm;  // LayerNorm without bias: one vector per norm
  e.context_length = 32768;
  e.attention.num_heads = 48;
  e.attention.num_kv_heads = 8;
  e.attention.head_dim = 128;
  e.moe.num_experts = 16;
  e.moe.top_k = 4;
  e.moe.expert_width = 10752;
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);

  const CostReport r = count(c);
  CHECK(r.params.total == 131'596'523'520);
  CHECK(r.params.total == Approx(132e9).epsilon(0.005));
  // Convention params.active: 36,469,708,800 -> "36B" (active_non_embedding, 35.2B, would not).
  CHECK(r.params.active == 36'469'708'800);
  CHECK(rounds_to(r.params.active, 36e9, 1e9));
  CHECK_FALSE(rounds_to(r.params.active_non_embedding, 36e9, 1e9));
}

TEST_CASE("Llama-3.1-8B imports as a dense model and reproduces 8.03B", "[hf_import]") {
  const ModelConfig c = read_config(example_path("llama-3.1-8b.json"));
  ModelConfig e;
  e.name = "llama";
  e.vocab_size = 128256;
  e.num_layers = 32;
  e.hidden_size = 4096;
  e.context_length = 131072;
  e.attention.num_heads = 32;
  e.attention.num_kv_heads = 8;
  e.attention.head_dim = 128;
  e.ffn.dense_width = 14336;
  CHECK(to_json(c) == to_json(e));
  CHECK(c == e);
  const CostReport r = count(c);
  CHECK(r.params.total == 8'030'261'248);
  CHECK(rounds_to(r.params.total, 8.03e9, 0.01e9));
  CHECK(r.params.active == r.params.total);
}
