// Small configs whose costs are computed by hand in the tests and in
// docs/counting.md.
#pragma once

#include "smelt/config.hpp"

namespace smelt::test {

// V = 1000 untied, L = 4, H = 64, 4 query heads / 2 KV heads of 16, gated FFN;
// layer 1 dense (width 128), layers 2-4 MoE: 8 experts of width 32, top-2,
// one shared expert of width 32; context 8; layers 2-3 looped twice.
inline ModelConfig tiny_moe() {
  ModelConfig c;
  c.name = "tiny-moe";
  c.vocab_size = 1000;
  c.num_layers = 4;
  c.hidden_size = 64;
  c.context_length = 8;
  c.kv_cache_bytes = 2;
  c.attention.num_heads = 4;
  c.attention.num_kv_heads = 2;
  c.attention.head_dim = 16;
  c.ffn.dense_width = 128;
  c.moe.num_experts = 8;
  c.moe.top_k = 2;
  c.moe.expert_width = 32;
  c.moe.num_shared_experts = 1;
  c.moe.shared_width = 32;
  c.moe.first_dense = 1;
  c.loop = {2, 3, 2, 0.5};
  return c;
}

// A dense GQA model with `layers` layers: H = 64, 4/2 heads of 16, FFN 128.
inline ModelConfig tiny_dense(std::int64_t layers) {
  ModelConfig c;
  c.name = "tiny-dense";
  c.vocab_size = 1000;
  c.num_layers = layers;
  c.hidden_size = 64;
  c.context_length = 8;
  c.attention.num_heads = 4;
  c.attention.num_kv_heads = 2;
  c.attention.head_dim = 16;
  c.ffn.dense_width = 128;
  return c;
}

// Mixtral-8x7B from its published sizes.
inline ModelConfig mixtral_8x7b() {
  ModelConfig c;
  c.name = "mixtral-8x7b";
  c.vocab_size = 32000;
  c.num_layers = 32;
  c.hidden_size = 4096;
  c.context_length = 32768;
  c.attention.num_heads = 32;
  c.attention.num_kv_heads = 8;
  c.attention.head_dim = 128;
  c.moe.num_experts = 8;
  c.moe.top_k = 2;
  c.moe.expert_width = 14336;
  return c;
}

// OLMoE-1B-7B-0924 from its published sizes.
inline ModelConfig olmoe_1b_7b() {
  ModelConfig c;
  c.name = "olmoe-1b-7b-0924";
  c.vocab_size = 50304;
  c.num_layers = 16;
  c.hidden_size = 2048;
  c.context_length = 4096;
  c.attention.num_heads = 16;
  c.attention.num_kv_heads = 16;
  c.attention.head_dim = 128;
  c.attention.qk_norm = QkNorm::full;
  c.moe.num_experts = 64;
  c.moe.top_k = 8;
  c.moe.expert_width = 1024;
  return c;
}

}  // namespace smelt::test
