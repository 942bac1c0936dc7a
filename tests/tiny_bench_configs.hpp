// Small configs that exercise every part of the benchmark's block, shared by
// the GPU test (kernels_bench_gpu_test.cpp) and its CPU emulation
// (emulated_layer_test.cpp).
#pragma once

#include "smelt/config.hpp"

namespace smelt::test {

// 2 layers, H 256, GQA 4 heads of 64 over 2 KV heads, 16 gated experts of 128, top-4.
inline ModelConfig tiny_moe() {
  ModelConfig c;
  c.name = "gpu-tiny-moe";
  c.vocab_size = 1000;
  c.num_layers = 2;
  c.hidden_size = 256;
  c.context_length = 512;
  c.attention.num_heads = 4;
  c.attention.num_kv_heads = 2;
  c.attention.head_dim = 64;
  c.moe.num_experts = 16;
  c.moe.top_k = 4;
  c.moe.expert_width = 128;
  return c;
}

inline ModelConfig tiny_dense() {
  ModelConfig c = tiny_moe();
  c.name = "gpu-tiny-dense";
  c.moe = MoeConfig{};
  c.ffn.dense_width = 512;
  return c;
}

// Plain FFNs, sigmoid router, two gated shared experts, a dense first layer,
// sliding / chunked / full attention, MQA, and a loop over layer 2 (scale 0.5).
inline ModelConfig tiny_variety() {
  ModelConfig c = tiny_moe();
  c.name = "gpu-tiny-variety";
  c.num_layers = 3;
  c.attention.num_kv_heads = 1;
  c.attention.pattern = {LayerAttention::sliding, LayerAttention::chunked, LayerAttention::full};
  c.attention.window = 100;
  c.attention.chunk = 96;
  c.ffn.type = FfnType::plain;
  c.ffn.dense_width = 384;
  c.moe.first_dense = 1;
  c.moe.router_score = RouterScore::sigmoid;
  c.moe.num_shared_experts = 2;
  c.moe.shared_width = 96;
  c.moe.shared_gate = true;
  c.loop = {2, 2, 2, 0.5};
  return c;
}

}  // namespace smelt::test
