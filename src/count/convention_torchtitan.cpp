// torchtitan's FLOP convention, rebuilt from a ModelConfig, as torchtitan
// computes it since its PR #3225 (2026-05; read at commit
// 01c01c88fe7a58a250e7adf6ddc3b7a3857597f4 of pytorch/torchtitan): each
// model's get_nparams_and_flops() returns
//   6 * active_nparams + sum over layers of quadratic_attention_flops_per_token()
// with get_nparams_and_active_nparams() and the attention helper in
// torchtitan/models/utils.py. active_nparams weighs every parameter by 1,
// the routed experts by top_k / num_experts, and an nn.Embedding's weight by
// 0 unless the output head shares it: a tied head still runs its matrix
// product, so it is charged (before PR #3225 it left with the embedding).
// The attention helper is 6 * n_heads * (qk_head_dim + v_head_dim) * tokens
// per layer, no causal halving, with tokens = seq_len, or min(seq_len,
// window) on a sliding layer (gpt-oss since PR #4300, 2026-08). Every norm
// and bias counts as a parameter.
#include <algorithm>

#include "smelt/convention.hpp"
#include "smelt/count.hpp"

namespace smelt {

TorchtitanFlops torchtitan_flops(const ModelConfig& config, std::int64_t context_length) {
  CountOptions options;
  options.context_length = context_length;
  const CostReport r = count(config, options);  // validates the config and the context
  const auto& a = config.attention;
  const std::int64_t head_dims = a.type == AttentionType::mla
                                     ? a.mla.qk_nope_head_dim + a.mla.qk_rope_head_dim + a.mla.v_head_dim
                                     : 2 * a.head_dim;
  TorchtitanFlops t;
  // smelt's active count takes top_k of each layer's E experts, which is
  // torchtitan's top_k / num_experts weighting exactly (every layer has the
  // same E, so the product has no remainder). The output head counts, tied
  // or not: untied it is its own tensor, tied it is the embedding's.
  t.params = r.params.active_non_embedding + (config.tie_embeddings ? r.params.embedding : r.params.lm_head);
  t.parameters = 6.0 * static_cast<double>(t.params);
  // Each executed visit attends seq_len tokens, a sliding one at most its window.
  double tokens = 0;
  for (const LayerCost& layer : r.layers) {
    const std::int64_t attended =
        layer.attention == LayerAttention::sliding ? std::min(r.context_length, a.window) : r.context_length;
    tokens += static_cast<double>(layer.visits) * static_cast<double>(attended);
  }
  t.attention = 6.0 * static_cast<double>(a.num_heads) * static_cast<double>(head_dims) * tokens;
  return t;
}

}  // namespace smelt
