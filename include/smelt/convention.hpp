// Other tools' FLOP conventions, rebuilt from a ModelConfig so smelt's counts
// can be compared with theirs term by term.
#pragma once

#include <cstdint>
#include <string_view>

#include "smelt/config.hpp"
#include "smelt/count.hpp"

namespace smelt {

// smelt: the counting contract of docs/counting.md. megatron: Megatron-LM's
// num_floating_point_operations (megatron/training/training.py). torchtitan:
// each model's get_nparams_and_flops over get_nparams_and_active_nparams and
// quadratic_attention_flops_per_token (torchtitan/models/utils.py).
// flop_counter ("flop-counter"): what torch.utils.flop_counter.FlopCounterMode
// counts on a forward.
enum class Convention { smelt, megatron, torchtitan, flop_counter };
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

// torchtitan's training FLOPs per token, 6 x params + the sum over layers of
// 6 x heads x (query/key head dim + value head dim) x tokens, in its two
// terms (tokens: seq, or min(seq, window) on a sliding layer). params are its
// active parameters without the input embedding: the output head counts,
// tied or not (a tied head is the embedding's tensor, still multiplied), the
// router and shared experts in full, routed experts top_k / num_experts of
// them. A looped config counts its layers once per visit in the attention
// term and its parameters once (model.parameters() holds each weight once).
// MTP modules are left out.
struct TorchtitanFlops {
  std::int64_t params = 0;  // active parameters without the input embedding (a tied head counts)
  double parameters = 0;    // 6 x params
  double attention = 0;     // sum of 6 x heads x (d_qk + d_v) x tokens per layer visit; no causal halving

  double training() const noexcept { return parameters + attention; }
  double forward() const noexcept { return training() / 3.0; }
};

// context_length 0 uses the config's. Throws config_error for an invalid config.
TorchtitanFlops torchtitan_flops(const ModelConfig& config, std::int64_t context_length = 0);

// What FlopCounterMode counts on one forward of a sequence of T tokens (batch
// 1), per token: every matrix product 2·m·n·k (bias adds free), attention as
// the full T x T products Q K^T and softmax · V on every layer visit (sliding
// and chunked layers too: their masks are applied after the products), the
// router, the top-k routed experts (the implementations that index each
// expert's tokens), shared experts, dense FFNs and the LM head; norms, RoPE,
// softmax, activations and the embedding gather free; MTP not run.
struct FlopCounterFlops {
  std::int64_t context_length = 0;  // T
  FlopTerms per_token;              // elementwise and mtp are 0

  double forward_per_token() const noexcept { return per_token.forward(); }
  // FlopCounterMode's total for one forward of T tokens.
  double forward_per_sequence() const noexcept { return per_token.forward() * static_cast<double>(context_length); }
};

// context_length 0 uses the config's. Throws config_error for an invalid config.
FlopCounterFlops flop_counter_flops(const ModelConfig& config, std::int64_t context_length = 0);

}  // namespace smelt
