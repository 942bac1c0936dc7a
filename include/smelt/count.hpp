// CostReport: what one token costs a model: forward and training FLOPs,
// parameters and KV cache, as totals and as separate terms per layer, counted
// over the LayerSchedule so looped layers pay FLOPs and KV cache per visit and
// parameters once. Conventions (docs/counting.md): forward FLOPs = 2 x
// multiply-accumulates; training = 3 x forward; a causal token attends to the
// exact average number of earlier tokens over a sequence of context_length.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "smelt/config.hpp"

namespace smelt {

struct CountOptions {
  // Adds norms, activations, softmax, residual adds and routing weights as
  // the "elementwise" term (approximate per-element costs, docs/counting.md).
  bool elementwise = false;
  // Context for attention FLOPs and KV cache; 0 uses the config's.
  std::int64_t context_length = 0;
};

// Forward FLOPs per token, one field per term.
struct FlopTerms {
  double attention_qkv = 0;     // Q, K, V projections (MLA: down/up projections)
  double attention_out = 0;     // output projection
  double attention_scores = 0;  // Q K^T at the causal average
  double attention_values = 0;  // softmax(..) V at the causal average
  double router = 0;            // 2 H E per MoE layer
  double experts = 0;           // top-k routed experts
  double shared_experts = 0;    // shared experts and their gate
  double dense_ffn = 0;         // FFN of non-MoE layers
  double elementwise = 0;       // only with CountOptions::elementwise
  double loop_extras = 0;       // what looped spans run beside their layers: exit gates, every pass
  double lm_head = 0;           // 2 H V, outside the layers
  double mtp = 0;               // multi-token-prediction modules (training only)

  // Everything but mtp: the forward pass of the main model.
  double forward() const noexcept {
    return attention_qkv + attention_out + attention_scores + attention_values + router + experts + shared_experts +
           dense_ffn + elementwise + loop_extras + lm_head;
  }
  FlopTerms& operator+=(const FlopTerms& o) noexcept;
  FlopTerms scaled(double factor) const noexcept;
  friend bool operator==(const FlopTerms&, const FlopTerms&) = default;
};

// Parameter counts (elements), one field per term.
struct ParamTerms {
  std::int64_t embedding = 0;
  std::int64_t lm_head = 0;  // 0 when tied to the embedding
  std::int64_t attention = 0;
  std::int64_t norms = 0;
  std::int64_t router = 0;
  std::int64_t experts = 0;  // all routed experts
  std::int64_t shared_experts = 0;
  std::int64_t dense_ffn = 0;
  std::int64_t loop_extras = 0;  // stored once beside the looped spans' layers: exit gates

  std::int64_t total() const noexcept {
    return embedding + lm_head + attention + norms + router + experts + shared_experts + dense_ffn + loop_extras;
  }
  friend bool operator==(const ParamTerms&, const ParamTerms&) = default;
};

// One weight-owning layer.
struct LayerCost {
  std::int64_t layer = 0;  // 1-based
  bool moe = false;
  LayerAttention attention = LayerAttention::full;
  std::int64_t visits = 1;  // executions per token
  ParamTerms params;        // stored once, whatever the visits
  std::int64_t active_params = 0;
  FlopTerms flops_per_visit;               // forward, per token, one visit
  double kv_bytes_per_visit = 0;           // per token of context, one visit
  std::int64_t kv_elements_per_visit = 0;  // per cached token, one visit
  std::int64_t kv_tokens_held = 0;         // tokens a visit caches at the context length
  // The same FLOPs as exact integers, for comparisons that must not round:
  // forward FLOPs of one visit over a sequence of T tokens are
  // T x matmul_flops_per_visit + score_flops_per_pair x attended_pairs
  // (plus elementwise work when counted, which is not exact).
  std::int64_t matmul_flops_per_visit = 0;  // per token: projections, router, experts, FFNs
  std::int64_t attended_pairs = 0;          // (query, key) pairs in one sequence
  std::int64_t score_flops_per_pair = 0;    // 2 x (query/key width + value width)

  friend bool operator==(const LayerCost&, const LayerCost&) = default;
};

struct CostReport {
  std::string model;
  std::int64_t context_length = 0;
  std::int64_t executed_layers = 0;  // effective depth

  struct Params {
    ParamTerms terms;  // norms include the final norm
    std::int64_t total = 0;
    std::int64_t embedding = 0;
    std::int64_t lm_head = 0;
    std::int64_t non_embedding = 0;  // total - embedding - lm_head
    std::int64_t active = 0;         // one traversal, with embedding and head
    std::int64_t active_non_embedding = 0;
    std::int64_t mtp = 0;  // multi-token-prediction modules, outside total
  } params;

  struct Flops {
    FlopTerms terms;
    double forward = 0;   // per token, main model
    double training = 0;  // 3 x (forward + mtp)
    double forward_non_embedding() const noexcept { return forward - terms.lm_head; }
  } flops;

  struct KvCache {
    double bytes_per_token = 0;         // total bytes at the context length / context length
    double elements_per_token = 0;      // same, in elements
    std::int64_t bytes_at_context = 0;  // cache of one full sequence of context_length
  } kv;

  std::vector<LayerCost> layers;  // one per weight-owning layer, in order
};

// Checks every rule a config must satisfy and throws config_error listing all
// violations, each naming the field path, the value and the rule; then that
// every total of its count fits in 64-bit integers (overflow_error naming the
// quantity). Here, beside count(), because the second rule is the count's.
void validate(const ModelConfig& config);

// Counts a config (validating it first; throws config_error).
CostReport count(const ModelConfig& config, const CountOptions& options = {});

}  // namespace smelt
