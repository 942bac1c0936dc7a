// An independent, literal transliteration of Megatron-LM's training FLOP
// formula, against which the tests check smelt::megatron_flops().
//
// Source followed: NVIDIA/Megatron-LM, megatron/training/training.py at commit
// 001b00c2734d8f0fad096fe48a382fedf755d321, num_floating_point_operations(args,
// batch_size) -> transformer_flops() (the non-hybrid path).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <numeric>
#include <optional>
#include <variant>
#include <vector>

namespace smelt::test::megatron {

using i64 = std::int64_t;

// The args transformer_flops() reads, with Python's names; std::nullopt is None.
// Not represented, because no ModelConfig can ask for them: moe_latent_size
// (always None) and experimental_attention_variant (never a linear variant).
struct MegatronArgs {
  i64 num_layers = 0;
  i64 hidden_size = 0;
  i64 num_attention_heads = 0;
  bool group_query_attention = false;
  i64 num_query_groups = 1;
  i64 kv_channels = 0;
  bool attention_output_gate = false;
  i64 seq_length = 0;
  i64 ffn_hidden_size = 0;
  bool swiglu = false;
  std::optional<i64> num_experts;
  std::variant<i64, std::vector<i64>> moe_layer_freq = i64{1};
  i64 moe_router_topk = 2;
  std::optional<i64> moe_ffn_hidden_size;
  std::optional<i64> moe_shared_expert_intermediate_size;
  std::optional<i64> mtp_num_layers;
  bool multi_latent_attention = false;
  std::optional<i64> q_lora_rank;
  i64 kv_lora_rank = 0;
  i64 qk_head_dim = 0;
  i64 qk_pos_emb_head_dim = 0;
  i64 v_head_dim = 0;
  i64 padded_vocab_size = 0;
};

inline double d(i64 v) { return static_cast<double>(v); }

// transformer_flops(), statement by statement, in the Python's operation order.
// `args` is a copy because the Python overwrites num_query_groups in place.
inline double transformer_flops(MegatronArgs args, double batch_size) {
  if (!args.group_query_attention) args.num_query_groups = args.num_attention_heads;
  double num_dense_layers = 0;
  double num_moe_layers = 0;
  double num_experts_routed_to = 0;
  double last_layer_is_moe = 0;
  if (!args.num_experts) {
    num_dense_layers = d(args.num_layers);
    num_moe_layers = 0;
    num_experts_routed_to = 0;
    last_layer_is_moe = 0;
  } else {
    std::vector<i64> moe_layer_pattern;
    if (const auto* freq = std::get_if<i64>(&args.moe_layer_freq)) {
      for (i64 i = 0; i < args.num_layers; ++i) moe_layer_pattern.push_back(i % *freq == 0 ? 1 : 0);
    } else {
      moe_layer_pattern = std::get<std::vector<i64>>(args.moe_layer_freq);
    }
    REQUIRE(static_cast<i64>(moe_layer_pattern.size()) == args.num_layers);
    num_moe_layers = d(std::accumulate(moe_layer_pattern.begin(), moe_layer_pattern.end(), i64{0}));
    num_dense_layers = d(args.num_layers) - num_moe_layers;
    num_experts_routed_to = d(args.moe_router_topk);
    last_layer_is_moe = d(moe_layer_pattern.back());
  }

  double mtp_num_layers = 0;
  double num_layers = 0;
  if (args.mtp_num_layers) {
    mtp_num_layers = d(*args.mtp_num_layers);
    num_moe_layers += last_layer_is_moe * mtp_num_layers;
    num_dense_layers += (1 - last_layer_is_moe) * mtp_num_layers;
    num_layers = d(args.num_layers) + mtp_num_layers;
  } else {
    mtp_num_layers = 0;
    num_layers = d(args.num_layers);
  }

  const double moe_ffn_hidden_size = d(args.moe_ffn_hidden_size ? *args.moe_ffn_hidden_size : args.ffn_hidden_size);
  const double shared_expert_ffn_hidden_size =
      args.moe_shared_expert_intermediate_size ? d(*args.moe_shared_expert_intermediate_size) : 0.0;

  const double forward_backward_expansion_factor = 3;
  const double fma_expansion_factor = 2;
  const double ffn_expansion_factor = args.swiglu ? 3 : 2;

  const double hidden_size = d(args.hidden_size);
  const double heads = d(args.num_attention_heads);
  const double seq_length = d(args.seq_length);
  double standard_self_attn_term = 0;
  if (args.multi_latent_attention) {
    REQUIRE(!args.group_query_attention);
    const double qk_head_dim = d(args.qk_head_dim);
    const double qk_pos_emb_head_dim = d(args.qk_pos_emb_head_dim);
    const double v_head_dim = d(args.v_head_dim);
    const double kv_lora_rank = d(args.kv_lora_rank);
    double q_term = 0;
    if (!args.q_lora_rank)
      q_term = hidden_size * heads * (qk_head_dim + qk_pos_emb_head_dim);
    else
      q_term = d(*args.q_lora_rank) * (hidden_size + heads * (qk_head_dim + qk_pos_emb_head_dim) + 1);
    standard_self_attn_term =
        forward_backward_expansion_factor * fma_expansion_factor *
        (q_term + kv_lora_rank * (hidden_size + heads * (qk_head_dim + v_head_dim) + 1) +
         hidden_size * qk_pos_emb_head_dim + (heads * v_head_dim) * hidden_size +
         seq_length * (heads * (qk_head_dim + qk_pos_emb_head_dim)) / 2 + seq_length * heads * v_head_dim / 2);
  } else {
    const double query_projection_size = d(args.kv_channels) * heads;
    const double key_projection_size = d(args.kv_channels) * d(args.num_query_groups);
    const double value_projection_size = d(args.kv_channels) * d(args.num_query_groups);
    const double gate_projection_size = args.attention_output_gate ? query_projection_size : 0;
    standard_self_attn_term =
        forward_backward_expansion_factor * fma_expansion_factor *
        (hidden_size * (query_projection_size + key_projection_size + value_projection_size + gate_projection_size) +
         query_projection_size * seq_length / 2 * 2 + query_projection_size * hidden_size);
  }

  const double num_linear_attention_layers = 0;
  const double linear_self_attn_term = 0;
  const double num_standard_attention_layers = num_layers;
  const double self_attn_term =
      linear_self_attn_term * num_linear_attention_layers + standard_self_attn_term * num_standard_attention_layers;

  return batch_size * seq_length *
         (forward_backward_expansion_factor * fma_expansion_factor * hidden_size *
              ((d(args.ffn_hidden_size) * ffn_expansion_factor) * num_dense_layers +
               (moe_ffn_hidden_size * num_experts_routed_to * ffn_expansion_factor) * num_moe_layers +
               (shared_expert_ffn_hidden_size * ffn_expansion_factor) * num_moe_layers) +
          self_attn_term +
          forward_backward_expansion_factor * fma_expansion_factor * mtp_num_layers *
              (3 * hidden_size + 2 * hidden_size * hidden_size) +
          forward_backward_expansion_factor * fma_expansion_factor * hidden_size * d(args.padded_vocab_size) *
              (mtp_num_layers + 1));
}

}  // namespace smelt::test::megatron
