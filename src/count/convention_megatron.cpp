// Megatron-LM's FLOP convention: num_floating_point_operations(args, batch_size)
// -> transformer_flops() in megatron/training/training.py (read at commit
// 001b00c2734d8f0fad096fe48a382fedf755d321), rebuilt from a ModelConfig.
//
// How a ModelConfig becomes Megatron's args:
//   num_layers          executed layers: a looped span counts once per visit
//   seq_length          the context (config.context_length unless overridden)
//   kv_channels         attention.head_dim; num_query_groups = attention.num_kv_heads
//   swiglu              ffn.type == gated (Megatron's 3/2 multiplier on the FFN)
//   ffn_hidden_size     ffn.dense_width; moe_ffn_hidden_size = moe.expert_width
//   moe_layer_freq      the list of is_moe_layer over the executed visits
//   moe_shared_expert_intermediate_size = num_shared_experts x shared_width
//   q_lora_rank         None when mla.q_lora_rank = 0; qk_head_dim = qk_nope_head_dim,
//                       qk_pos_emb_head_dim = qk_rope_head_dim
//   mtp_num_layers      mtp_modules
//   padded_vocab_size   vocab_size. Megatron pads the vocabulary to a multiple of
//                       128 x tensor-parallel size; that depends on the parallel
//                       layout, not the model, so the config's vocabulary is used.
// Megatron knows nothing of sliding windows or chunked attention: every layer
// attends to seq_length / 2 tokens, so those patterns are ignored here. It also
// omits the router, biases, q/k norms, sinks and the shared-expert gate.
#include <array>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "smelt/convention.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/error.hpp"
#include "smelt/schedule.hpp"
#include "util/enum_names.hpp"

namespace smelt {
namespace {

constexpr detail::EnumNames<Convention, 4> kConventions{{{Convention::smelt, "smelt"},
                                                         {Convention::megatron, "megatron"},
                                                         {Convention::torchtitan, "torchtitan"},
                                                         {Convention::flop_counter, "flop-counter"}}};

using detail::kMaxContext;

double dbl(std::int64_t v) { return static_cast<double>(v); }

// The bracket Megatron multiplies by 3 x 2 for one attention layer, per token.
double attention_bracket(const ModelConfig& c, double s) {
  const auto& a = c.attention;
  const double h = dbl(c.hidden_size);
  const double nh = dbl(a.num_heads);
  if (a.type == AttentionType::mla) {
    const auto& m = a.mla;
    const double qk = dbl(m.qk_nope_head_dim);
    const double rope = dbl(m.qk_rope_head_dim);
    const double v = dbl(m.v_head_dim);
    const double rank = dbl(m.kv_lora_rank);
    // The "+ 1" per rank is Megatron's charge for the q and kv latent norms.
    const double q_term = m.q_lora_rank == 0 ? h * nh * (qk + rope) : dbl(m.q_lora_rank) * (h + nh * (qk + rope) + 1.0);
    return q_term + rank * (h + nh * (qk + v) + 1.0) + h * rope  // q, kv down/up, shared rope key
           + nh * v * h                                          // output projection
           + s * nh * (qk + rope) / 2.0 + s * nh * v / 2.0;      // causal QK^T and AV
  }
  // Megatron has no attention_output_gate in a ModelConfig: its gate term is 0.
  const double q = dbl(a.head_dim) * nh;
  const double kv = dbl(a.head_dim) * dbl(a.num_kv_heads);
  return h * (q + kv + kv) + q * s / 2.0 * 2.0 + q * h;
}

}  // namespace

std::string_view to_string(Convention v) { return detail::name_of(kConventions, v); }
Convention parse_convention(std::string_view s, std::string_view field) {
  return detail::parse_of(kConventions, s, field);
}

MegatronFlops megatron_flops(const ModelConfig& config, std::int64_t context_length) {
  validate(config);
  if (context_length < 0 || context_length > kMaxContext)
    throw config_error(
        fmt::format("context_length = {}: must be between 1 and {} tokens", context_length, kMaxContext));
  const double s = dbl(context_length > 0 ? context_length : config.context_length);
  const double h = dbl(config.hidden_size);

  // Megatron's moe_layer_pattern is over its num_layers, which here are the
  // executed visits, so a looped MoE layer counts once per visit.
  const LayerSchedule plan = schedule(config);
  std::int64_t moe_layers = 0;
  for (const LayerBlock& block : plan.blocks)
    for (std::int64_t i = block.first; i <= block.last; ++i) moe_layers += config.is_moe_layer(i) ? block.passes : 0;
  const std::int64_t executed = plan.executed_layers();
  std::int64_t dense_layers = executed - moe_layers;
  // MTP modules add one layer each, shaped like the last executed layer.
  const bool last_is_moe = config.is_moe_layer(plan.blocks.back().last);
  const std::int64_t mtp = config.mtp_modules;
  if (last_is_moe)
    moe_layers += mtp;
  else
    dense_layers += mtp;
  const std::int64_t attention_layers = executed + mtp;

  constexpr double kFactor = 3.0 * 2.0;  // forward + two backward GEMMs, 2 FLOPs per MAC
  const double ffn_factor = config.ffn.type == FfnType::gated ? 3.0 : 2.0;
  const auto& m = config.moe;
  MegatronFlops r;
  r.self_attention = kFactor * attention_bracket(config, s) * dbl(attention_layers);
  r.dense_mlp = kFactor * h * dbl(config.ffn.dense_width) * ffn_factor * dbl(dense_layers);
  r.routed_experts = kFactor * h * dbl(m.expert_width) * dbl(m.top_k) * ffn_factor * dbl(moe_layers);
  r.shared_experts = kFactor * h * dbl(m.num_shared_experts * m.shared_width) * ffn_factor * dbl(moe_layers);
  r.mtp = kFactor * dbl(mtp) * (3.0 * h + 2.0 * h * h);  // eh norms + final norm, eh projection
  r.logits = kFactor * h * dbl(config.vocab_size) * dbl(mtp + 1);
  return r;
}

}  // namespace smelt
