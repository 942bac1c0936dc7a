// Other tools' FLOP conventions, rebuilt from a ModelConfig so smelt's counts
// can be compared with theirs term by term.
#pragma once

#include <cstdint>
#include <string_view>

#include "smelt/config.hpp"

namespace smelt {

// smelt: the counting contract of docs/counting.md. megatron: Megatron-LM's
// num_floating_point_operations (megatron/training/training.py).
enum class Convention { smelt, megatron };
std::string_view to_string(Convention v);
Convention parse_convention(std::string_view s, std::string_view field);

// Megatron-LM's training FLOPs (forward + backward = 3 x forward) divided by
// batch x seq_length, split into the terms its formula adds up. Looped layers
// count once per visit (Megatron's num_layers = executed layers).
struct MegatronFlops {
  double self_attention = 0;  // QKV/O projections and core attention with causal s/2
  double dense_mlp = 0;       // non-MoE FFN layers
  double routed_experts = 0;  // top-k experts
  double shared_experts = 0;
  double mtp = 0;     // MTP norms and eh projection
  double logits = 0;  // output layer, once per MTP module too

  double training() const noexcept {
    return self_attention + dense_mlp + routed_experts + shared_experts + mtp + logits;
  }
  double forward() const noexcept { return training() / 3.0; }
};

// context_length 0 uses the config's. Throws config_error for an invalid config.
MegatronFlops megatron_flops(const ModelConfig& config, std::int64_t context_length = 0);

}  // namespace smelt
