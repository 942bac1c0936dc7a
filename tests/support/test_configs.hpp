// Small configs whose costs are computed by hand in the tests and in
// docs/counting.md; the examples and validation helpers several test files share.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/config_io.hpp"
#include "smelt/count.hpp"
#include "smelt/error.hpp"

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
  c.loops = {{2, 3, 2, 0.5}};
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

// Block-sized configs for the CUDA backend's tests (kernels_bench_gpu_test.cpp on a
// GPU, emulated_layer_test.cpp on the CPU), which exercise every part of the
// benchmark's block.
// 2 layers, H 256, GQA 4 heads of 64 over 2 KV heads, 16 gated experts of 128, top-4.
inline ModelConfig bench_moe() {
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

inline ModelConfig bench_dense() {
  ModelConfig c = bench_moe();
  c.name = "gpu-tiny-dense";
  c.moe = MoeConfig{};
  c.ffn.dense_width = 512;
  return c;
}

// Plain FFNs, sigmoid router, two gated shared experts, a dense first layer,
// sliding / chunked / full attention, MQA, and a loop over layer 2 (scale 0.5).
inline ModelConfig bench_variety() {
  ModelConfig c = bench_moe();
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
  c.moe.router_form = default_router_form(c.moe);  // the form a file with these scores and bias reads
  c.moe.renormalize = default_renormalize(c.moe.router_form);
  c.moe.num_shared_experts = 2;
  c.moe.shared_width = 96;
  c.moe.shared_gate = true;
  c.loops = {{2, 2, 2, 0.5}};
  return c;
}

// The lines of the config_error validate() raises for `c`; empty when it raises none.
inline std::vector<std::string> violations_of(const ModelConfig& c) {
  try {
    validate(c);
  } catch (const config_error& e) {
    return e.lines();
  }
  return {};
}

// The message of the config_error `f` throws; "" when it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const config_error& e) {
    return e.what();
  }
  return "";
}

#ifdef SMELT_SOURCE_DIR
// examples/NAME of this source tree.
inline ModelConfig example(const std::string& name) { return read_config(SMELT_SOURCE_DIR "/examples/" + name); }

// The paper's 200M Baseline with 8 experts and 2 KV heads of 128 (examples/paper/).
inline ModelConfig paper_200m() { return example("paper/paper-200m-e8-kv2x128.json"); }
#endif

}  // namespace smelt::test
