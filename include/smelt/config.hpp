// ModelConfig: a decoder-only transformer (dense or Mixture-of-Experts,
// optionally looped) described by the sizes that decide its cost. A value type:
// build it, call validate() (include/smelt/count.hpp), then hand it to count(). All sizes are element
// counts (not bytes) unless the name says otherwise; layer numbers exposed to
// users are 1-based, as in the SMELT paper, while member functions taking a
// layer index use 0-based indices.
#pragma once

#include <cstdint>
#include <optional>
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
// How a router turns its scores into the chosen experts and their weights (none changes a count).
// plain: top-k of the scores, each expert's output weighed by its score; moe.router_bias is added to the logits
// (gpt-oss). Softmax scores only. deepseek: DeepseekV3TopkRouter's form: moe.router_bias is a correction bias
// added to the scores for the choice alone, the output weighed by the uncorrected score. llama4: Llama4Router's:
// top-k of the logits, the sigmoid of the chosen weighs the expert's *input*; never renormalised, no bias.
enum class RouterForm { plain, deepseek, llama4 };
// Where a layer's norms sit. pre: one before each sublayer, x + f(norm(x))
// (Llama). sandwich: also one on each sublayer's output, x + norm2(f(norm1(x)))
// (Ouro, Gemma 2). sandwich_residual: also one on the residual sum,
// norm2(x + f(norm1(x))) (Huginn's SandwichBlock). Four norms a layer but pre's two.
enum class NormPlacement { pre, sandwich, sandwich_residual };

std::string_view to_string(AttentionType v);
std::string_view to_string(QkNorm v);
std::string_view to_string(LayerAttention v);
std::string_view to_string(FfnType v);
std::string_view to_string(NormType v);
std::string_view to_string(RouterScore v);
std::string_view to_string(RouterForm v);
std::string_view to_string(NormPlacement v);
// parse_* throw config_error naming `field` when the word is not known.
AttentionType parse_attention_type(std::string_view s, std::string_view field);
QkNorm parse_qk_norm(std::string_view s, std::string_view field);
LayerAttention parse_layer_attention(std::string_view s, std::string_view field);
FfnType parse_ffn_type(std::string_view s, std::string_view field);
NormType parse_norm_type(std::string_view s, std::string_view field);
RouterScore parse_router_score(std::string_view s, std::string_view field);
RouterForm parse_router_form(std::string_view s, std::string_view field);
NormPlacement parse_norm_placement(std::string_view s, std::string_view field);

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
  bool qk_bias = false;  // biases on q and k only (Huginn's qk_bias); not with qkv_bias
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
  // The routing choices no count depends on (the reference model runs them; docs/config.md, section 1.4):
  // router_form (see RouterForm; default_router_form() when a file does not say), whether the top-k weights are
  // divided by their sum (default_renormalize()), and gpt-oss's clamped SwiGLU in the routed experts
  // (GptOssExperts: gate clamped above at limit, up to [-limit, limit], (up + 1) * gate * sigmoid(alpha * gate)).
  RouterForm router_form = RouterForm::plain;
  bool renormalize = true;
  struct ClampedSwiglu {
    double alpha = 0;
    double limit = 0;
    friend bool operator==(const ClampedSwiglu&, const ClampedSwiglu&) = default;
  };
  std::optional<ClampedSwiglu> clamped_swiglu;
  // Which layers are MoE. When `layers` (1-based) is non-empty it is the list;
  // otherwise 0-based layer i is MoE when i >= first_dense and i % every == phase.
  std::int64_t first_dense = 0;
  std::int64_t every = 1;
  std::int64_t phase = 0;
  std::vector<std::int64_t> layers;

  friend bool operator==(const MoeConfig&, const MoeConfig&) = default;
};

// The router form and renormalisation a native config has when it does not name them: softmax scores route
// plainly; sigmoid scores as DeepSeek-V3 with moe.router_bias (its correction bias) and as Llama 4 without; every
// form but Llama 4's renormalises.
RouterForm default_router_form(const MoeConfig& m);
bool default_renormalize(RouterForm form);

// What enters a span before each pass besides the state: nothing, or
// (linear) Huginn's adapter, Linear(2H -> H) of the state and the span's input
// of the first pass (the prelude's output) side by side, stored once.
enum class Injection { none, linear };
std::string_view to_string(Injection v);
Injection parse_injection(std::string_view s, std::string_view field);

// What a looped layer caches across its visits: one slot per visit (Ouro,
// SMELT); the first visit's only, which later visits read (recursive KV
// sharing); or on each pass only the tokens still active at that depth, a
// fraction kv_keep[p] of them (Mixture-of-Recursions' recursion-wise caching).
enum class KvPolicy { per_visit, shared, active };
std::string_view to_string(KvPolicy v);
KvPolicy parse_kv_policy(std::string_view s, std::string_view field);

// A projection a per-visit LoRA adapts: attention's q, k, v, o; a dense FFN's gate, up, down.
enum class LoraTarget { q, k, v, o, gate, up, down };
std::string_view to_string(LoraTarget v);
LoraTarget parse_lora_target(std::string_view s, std::string_view field);

// A span of layers executed `count` times with the same weights.
struct LoopConfig {
  std::int64_t first = 0;  // 1-based, inclusive; 0 when there is no loop
  std::int64_t last = 0;   // 1-based, inclusive
  std::int64_t count = 1;
  double residual_scale = 1.0;  // scale on looped residual updates; 1/count by default
  // Per-pass extras of a span that ends at the last layer (Ouro's whole-stack
  // loop): the model's final norm after every pass, its output fed to the
  // next pass; and an early-exit gate H -> 1 with a bias, stored once, run on
  // every pass's normed output.
  bool norm_each_pass = false;
  bool exit_gate = false;
  Injection injection = Injection::none;
  bool injection_bias = false;  // the adapter's bias
  // The model's final norm once after the last pass, fed on (Huginn's ln_f, "used twice").
  bool norm_after = false;
  // Passes the training backward runs through (truncated backprop, Huginn's
  // mean_backprop_depth): the last ones; 0 means all.
  std::int64_t backprop_passes = 0;
  // Relaxed recursive transformers (per-visit LoRA): every pass of every layer
  // of the span adds its own B A (A: in -> rank, B: rank -> out) to each target
  // projection; rank 0: none.
  std::int64_t lora_rank = 0;
  std::vector<LoraTarget> lora_targets{};
  KvPolicy kv_policy = KvPolicy::per_visit;
  std::vector<double> kv_keep{};  // active: the fraction of tokens each pass caches, count entries in (0, 1]

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
  NormPlacement norm_placement = NormPlacement::pre;
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
  // The active span holding 0-based `layer`, or nullptr (spans disjoint and in layer order, as validated).
  const LoopConfig* loop_of(std::int64_t layer) const;
  // The scale on 0-based `layer`'s residual updates: its span's, 1 outside any.
  double residual_scale_at(std::int64_t layer) const;
  bool looped() const noexcept;  // some span runs more than once

  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// The (input, output) widths of the projection a LoRA target adapts in a
// standard-attention layer with a dense FFN: q H -> heads x d, k and v H ->
// kv heads x d, o heads x d -> H, gate and up H -> dense_width, down back.
struct ProjectionShape {
  std::int64_t in = 0;
  std::int64_t out = 0;
};
ProjectionShape projection_shape(const ModelConfig& config, LoraTarget target);

// Parses a 1-based inclusive span "4-9" (or "5" for one layer) into `loop`'s
// first/last. Throws config_error naming `field`.
void parse_span(std::string_view text, std::string_view field, LoopConfig& loop);
std::string format_span(const LoopConfig& loop);

}  // namespace smelt
