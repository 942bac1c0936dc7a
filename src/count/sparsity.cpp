// The SMELT paper's sparsity S (include/smelt/sparsity.hpp).
#include "smelt/sparsity.hpp"

namespace smelt {
namespace {

Sparsity compare(const CostReport& cost, const CostReport& reference) {
  Sparsity s;
  s.flops = cost.flops.forward_non_embedding();
  s.params = cost.params.non_embedding;
  s.reference_flops = reference.flops.forward_non_embedding();
  s.reference_params = reference.params.non_embedding;
  // Validated configs have positive FLOPs and parameters; N_act^eq / N in one
  // expression of ratios, so that no product of two large counts is formed.
  s.value =
      1.0 - (s.flops / s.reference_flops) * (static_cast<double>(s.reference_params) / static_cast<double>(s.params));
  return s;
}

}  // namespace

ModelConfig every_expert_active(const ModelConfig& config) {
  ModelConfig all = config;
  if (all.is_moe()) all.moe.top_k = all.moe.num_experts;
  return all;
}

Sparsity sparsity(const ModelConfig& config, const CostReport& cost, const CountOptions& options) {
  if (!config.is_moe() || config.moe.top_k == config.moe.num_experts) return compare(cost, cost);
  return compare(cost, count(every_expert_active(config), options));
}

Sparsity sparsity(const CostReport& cost, const CostReport& reference) {
  Sparsity s = compare(cost, reference);
  s.reference = reference.model;
  return s;
}

}  // namespace smelt
