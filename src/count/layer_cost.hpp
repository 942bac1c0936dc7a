// Cost of one layer (one visit) and of the pieces it is built from. Private to
// the library: count() assembles these over the schedule.
#pragma once

#include <cstdint>

#include "smelt/config.hpp"
#include "smelt/count.hpp"

namespace smelt::count_detail {

// Tokens a query attends to, summed over the positions 1..T of one sequence
// (itself included): T(T+1)/2 for full causal attention.
std::int64_t attended_pairs(const AttentionConfig& a, LayerAttention kind, std::int64_t context);
// Tokens a layer must keep in its KV cache at context T.
std::int64_t tokens_held(const AttentionConfig& a, LayerAttention kind, std::int64_t context);

// Everything one layer costs, for one visit. FLOPs are per token.
LayerCost layer_cost(const ModelConfig& c, std::int64_t layer, bool moe, LayerAttention kind, std::int64_t context,
                     const CountOptions& options);

}  // namespace smelt::count_detail
