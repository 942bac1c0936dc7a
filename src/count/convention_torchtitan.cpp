// torchtitan's FLOP convention, rebuilt from a ModelConfig:
// get_dense_model_nparams_and_flops() and get_moe_model_nparams_and_flops()
// in torchtitan/models/utils.py (pytorch/torchtitan):
//   num_flops_per_token = 6 * (nparams_dense - nparams_embedding + nparams_sparse_active)
//                       + 6 * n_layers * n_heads * head_dims * seq_len
// with head_dims the query/key plus the value head dimension (2 x head_dim for
// GQA, qk_nope + qk_rope + v for MLA) and nparams_sparse_active = router +
// shared experts + experts * top_k // num_experts. The embedding is the only
// parameter left out: the output head is "dense" (a tied head is the same
// tensor as the embedding, which named_parameters() yields once, under the
// embedding's name). Every norm and bias counts as a parameter.
#include "smelt/convention.hpp"
#include "smelt/cost.hpp"

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
  // torchtitan's experts * top_k // num_experts exactly (every layer has the
  // same E, so the division has no remainder).
  t.params = r.params.active_non_embedding + r.params.lm_head;
  t.parameters = 6.0 * static_cast<double>(t.params);
  t.attention = 6.0 * static_cast<double>(r.executed_layers) * static_cast<double>(a.num_heads) *
                static_cast<double>(head_dims) * static_cast<double>(r.context_length);
  return t;
}

}  // namespace smelt
