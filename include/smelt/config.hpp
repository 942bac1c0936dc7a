// ModelConfig: a decoder-only transformer (dense or Mixture-of-Experts,
// optionally looped) described by the sizes that decide its cost. A value type:
// build it, call validate() (include/smelt/count.hpp), then hand it to count(). All sizes are element
// counts (not bytes) unless the name says otherwise; layer numbers exposed to
// users are 1-based, as in the SMELT paper, while member functions taking a
// layer index use 0-based indices.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace smelt {

// Standard attention covers MHA, GQA and MQA (num_kv_heads = num_heads, a
// divisor of it, or 1); mla is DeepSeek's Multi-head Latent Attention.
enum class AttentionType { gqa, mla };
// Where query/key normalisation weights sit: none, one vector of head_dim shared
// by all heads (Qwen3), or one over all heads' concatenation (OLMoE).
enum class QkNorm { none, per_head, full };
// What one layer's attention sees: the whole causal prefix, the last `window`
// tokens, or the tokens of its own `chunk` (Llama 4).
enum class LayerAttention { full, sliding, chunked };
// Gated FFNs (SwiGLU, GeGLU) have three matrices, plain ones two.
enum class FfnType { gated, plain };
enum class NormType { rmsnorm, layernorm };
enum class RouterScore { softmax, sigmoid };

std::string_view to_string(AttentionType v);
std::string_view to_string(QkNorm v);
std::string_view to_string(LayerAttention v);
std::string_view to_string(FfnType v);
std::string_view to_string(NormType v);
std::string_view to_string(RouterScore v);
// parse_* throw config_error naming `field` when the word is not known.
AttentionType parse_attention_type(std::string_view s, std::string_view field);
QkNorm parse_qk_norm(std::string_view s, std::string_view field);
LayerAttention parse_layer_attention(std::string_view s, std::string_view field);
FfnType parse_ffn_type(std::string_view s, std::string_view field);
NormType parse_norm_type(std::string_view s, std::string_view field);
RouterScore parse_router_score(std::string_view s, std::string_view field);

// Multi-head Latent Attention sizes (DeepSeek-V2/V3 names).
struct MlaConfig {
  std::int64_t q_lora_rank = 0;  // 0: queries are projected from the hidden state directly
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;

  friend bool operator==(const MlaConfig&, const MlaConfig&) = default;
};

struct AttentionConfig {
  AttentionType type = AttentionType::gqa;
  std::int64_t num_heads = 0;     // query heads
  std::int64_t num_kv_heads = 0;  // gqa only
  std::int64_t head_dim = 0;      // gqa only; never derived from hidden/heads
  bool qkv_bias = false;
  bool out_bias = false;
  QkNorm qk_norm = QkNorm::none;
  bool sinks = false;  // one learned sink logit per query head (gpt-oss)
  MlaConfig mla;       // mla only
  // Attention kind per layer, repeated cyclically over the layers: {full} for
  // all-global, {sliding, full} for gpt-oss, {chunked, chunked, chunked, full}
  // for Llama 4.
  std::vector<LayerAttention> pattern{LayerAttention::full};
  std::int64_t window = 0;  // tokens seen by a sliding layer (itself included)
  std::int64_t chunk = 0;   // tokens per chunk of a chunked layer

  friend bool operator==(const AttentionConfig&, const AttentionConfig&) = default;
};

// Shape shared by dense FFN layers, routed experts and shared experts.
struct FfnConfig {
  FfnType type = FfnType::gated;
  bool bias = false;
  std::int64_t dense_width = 0;  // intermediate size of non-MoE layers; 0 when there are none

  friend bool operator==(const FfnConfig&, const FfnConfig&) = default;
};

struct MoeConfig {
  std::int64_t num_experts = 0;  // routed experts; 0 means a dense model
  std::int64_t top_k = 0;
  std::int64_t expert_width = 0;  // intermediate size of one routed expert
  std::int64_t num_shared_experts = 0;
  std::int64_t shared_width = 0;  // intermediate size of one shared expert
  bool shared_gate = false;       // sigmoid gate H -> 1 on the shared output (Qwen2-MoE)
  bool router_bias = false;       // one bias per expert (gpt-oss; DeepSeek-V3's correction bias)
  RouterScore router_score = RouterScore::softmax;
  // Which layers are MoE. When `layers` (1-based) is non-empty it is the list;
  // otherwise 0-based layer i is MoE when i >= first_dense and i % every == phase.
  std::int64_t first_dense = 0;
  std::int64_t every = 1;
  std::int64_t phase = 0;
  std::vector<std::int64_t> layers;

  friend bool operator==(const MoeConfig&, const MoeConfig&) = default;
};

// A span of layers executed `count` times with the same weights.
struct LoopConfig {
  std::int64_t first = 0;  // 1-based, inclusive; 0 when there is no loop
  std::int64_t last = 0;   // 1-based, inclusive
  std::int64_t count = 1;
  double residual_scale = 1.0;  // scale on looped residual updates; 1/count by default

  bool active() const noexcept { return first > 0 && count > 1; }
  bool contains(std::int64_t layer) const noexcept { return layer + 1 >= first && layer + 1 <= last; }  // 0-based

  friend bool operator==(const LoopConfig&, const LoopConfig&) = default;
};

struct ModelConfig {
  std::string name;
  std::int64_t vocab_size = 0;
  bool tie_embeddings = false;
  std::int64_t num_layers = 0;
  std::int64_t hidden_size = 0;
  NormType norm = NormType::rmsnorm;
  std::int64_t context_length = 4096;  // tokens, for attention FLOPs and KV cache
  std::int64_t kv_cache_bytes = 2;     // bytes per cached element
  AttentionConfig attention;
  FfnConfig ffn;
  MoeConfig moe;
  // Looped spans in layer order, disjoint: one for the SMELT recipe, several
  // for a block-repeat config; empty when nothing loops.
  std::vector<LoopConfig> loops;
  std::int64_t mtp_modules = 0;  // multi-token-prediction modules (DeepSeek-V3)

  bool is_moe() const noexcept { return moe.num_experts > 0; }
  bool is_moe_layer(std::int64_t layer) const;            // 0-based
  LayerAttention attention_at(std::int64_t layer) const;  // 0-based
  // How many times 0-based `layer` executes per token (its span's count inside a span).
  std::int64_t visits(std::int64_t layer) const;
  // The active span holding 0-based `layer`, or nullptr.
  const LoopConfig* loop_of(std::int64_t layer) const;
  // The scale on 0-based `layer`'s residual updates: its span's, 1 outside any.
  double residual_scale_at(std::int64_t layer) const;
  bool looped() const noexcept;  // some span runs more than once

  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// Parses a 1-based inclusive span "4-9" (or "5" for one layer) into `loop`'s
// first/last. Throws config_error naming `field`.
void parse_span(std::string_view text, std::string_view field, LoopConfig& loop);
std::string format_span(const LoopConfig& loop);

}  // namespace smelt
