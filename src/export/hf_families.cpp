// The Hugging Face writers (export/hf_families.hpp). Each key's meaning and
// default is the one its reader in config/hf_import.cpp documents; keys smelt
// does not model (rope settings, token ids, norm epsilons) are left out, so
// transformers uses its config class's defaults for them, except where a
// class has no default and cannot build without the key (DBRX's rope_theta).
#include "export/hf_families.hpp"

#include "config/hf_smelt.hpp"
#include "config/native_json.hpp"
#include "export/moe_layers.hpp"

#include <cstdint>

namespace smelt::export_detail {
namespace {

using i64 = std::int64_t;

std::vector<LayerAttention> kinds(const ModelConfig& c) {
  std::vector<LayerAttention> out;
  for (i64 i = 0; i < c.num_layers; ++i) out.push_back(c.attention_at(i));
  return out;
}

bool any_kind(const ModelConfig& c, LayerAttention kind) {
  for (i64 i = 0; i < c.num_layers; ++i)
    if (c.attention_at(i) == kind) return true;
  return false;
}

std::string_view dtype_of(const ModelConfig& c) {
  if (c.kv_cache_bytes == 4) return "float32";
  if (c.kv_cache_bytes == 1) return "float8_e4m3fn";
  return "bfloat16";  // the import's reading of any other dtype: 2 bytes
}

void write_common(const ModelConfig& c, HfJson& j) {
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["num_hidden_layers"] = c.num_layers;
  j["max_position_embeddings"] = c.context_length;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["num_attention_heads"] = c.attention.num_heads;
  j["num_key_value_heads"] = c.attention.num_kv_heads;
  j["head_dim"] = c.attention.head_dim;
  j["torch_dtype"] = dtype_of(c);
  j["hidden_act"] = "silu";
}

// Mistral and Mixtral: one window for every layer, or none.
void write_mistral_window(const ModelConfig& c, HfJson& j) {
  j["sliding_window"] = any_kind(c, LayerAttention::sliding) ? HfJson(c.attention.window) : HfJson(nullptr);
}

// Qwen: layers from max_window_layers on slide when use_sliding_window is set.
void write_qwen_window(const ModelConfig& c, HfJson& j) {
  i64 from = c.num_layers;
  for (i64 i = c.num_layers - 1; i >= 0 && c.attention_at(i) == LayerAttention::sliding; --i) from = i;
  const bool sliding = any_kind(c, LayerAttention::sliding);
  j["use_sliding_window"] = sliding;
  j["sliding_window"] = sliding ? HfJson(c.attention.window) : HfJson(nullptr);
  j["max_window_layers"] = from;
}

// Qwen MoE layers: (i + 1) % decoder_sparse_step == 0, minus mlp_only_layers.
void write_qwen_moe_layers(const ModelConfig& c, HfJson& j) {
  const auto& m = c.moe;
  if (m.layers.empty() && m.first_dense == 0 && m.phase == m.every - 1) {
    j["decoder_sparse_step"] = m.every;
    j["mlp_only_layers"] = HfJson::array();
    return;
  }
  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = HfJson::array();
  const std::vector<bool> moe = moe_layer_flags(c);
  for (std::size_t i = 0; i < moe.size(); ++i)
    if (!moe[i]) j["mlp_only_layers"].push_back(i);
}

void write_llama(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["attention_bias"] = c.attention.qkv_bias;
  j["mlp_bias"] = c.ffn.bias;
  j["intermediate_size"] = c.ffn.dense_width;
}

void write_mistral(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["intermediate_size"] = c.ffn.dense_width;
  write_mistral_window(c, j);
}

void write_mixtral(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["num_local_experts"] = c.moe.num_experts;
  j["num_experts_per_tok"] = c.moe.top_k;
  j["intermediate_size"] = c.moe.expert_width;
  write_mistral_window(c, j);
}

void write_qwen2(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["intermediate_size"] = c.ffn.dense_width;
  write_qwen_window(c, j);
}

void write_qwen3(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["attention_bias"] = c.attention.qkv_bias;
  j["intermediate_size"] = c.ffn.dense_width;
  write_qwen_window(c, j);
}

void write_qwen_moe(const ModelConfig& c, HfJson& j) {
  j["num_experts"] = c.moe.num_experts;
  j["num_experts_per_tok"] = c.moe.top_k;
  j["moe_intermediate_size"] = c.moe.expert_width;
  j["norm_topk_prob"] = c.moe.renormalize;
  write_qwen_moe_layers(c, j);
}

void write_qwen2_moe(const ModelConfig& c, HfJson& j) {
  write_qwen2(c, j);
  j["qkv_bias"] = c.attention.qkv_bias;
  j["shared_expert_intermediate_size"] = c.moe.num_shared_experts > 0 ? c.moe.shared_width : 0;
  write_qwen_moe(c, j);
}

void write_qwen3_moe(const ModelConfig& c, HfJson& j) {
  write_qwen3(c, j);
  write_qwen_moe(c, j);
}

void write_olmoe(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["attention_bias"] = c.attention.qkv_bias;
  j["num_experts"] = c.moe.num_experts;
  j["num_experts_per_tok"] = c.moe.top_k;
  j["intermediate_size"] = c.moe.expert_width;
  j["norm_topk_prob"] = c.moe.renormalize;
}

// DeepSeek MoE layers: i >= first_k_dense_replace and i % moe_layer_freq == 0.
void write_deepseek(const ModelConfig& c, HfJson& j, bool v3) {
  write_common(c, j);
  j.erase("head_dim");
  j["num_key_value_heads"] = c.attention.num_heads;  // DeepseekV3Config's default; MLA ignores it
  const auto& mla = c.attention.mla;
  j["q_lora_rank"] = mla.q_lora_rank > 0 ? HfJson(mla.q_lora_rank) : HfJson(nullptr);
  j["kv_lora_rank"] = mla.kv_lora_rank;
  j["qk_nope_head_dim"] = mla.qk_nope_head_dim;
  j["qk_rope_head_dim"] = mla.qk_rope_head_dim;
  j["v_head_dim"] = mla.v_head_dim;
  j["attention_bias"] = false;
  j["intermediate_size"] = c.ffn.dense_width;
  const auto& m = c.moe;
  j["n_routed_experts"] = m.num_experts;
  j["num_experts_per_tok"] = m.top_k;
  j["moe_intermediate_size"] = m.expert_width;
  j["n_shared_experts"] = m.num_shared_experts;
  j["first_k_dense_replace"] = m.first_dense;
  j["moe_layer_freq"] = m.every;
  j["scoring_func"] = to_string(m.router_score);
  if (!v3) j["topk_method"] = m.router_bias ? "noaux_tc" : "greedy";
  if (v3) j["norm_topk_prob"] = m.renormalize;  // V2's router never renormalises
  j["num_nextn_predict_layers"] = c.mtp_modules;
}

void write_deepseek_v2(const ModelConfig& c, HfJson& j) { write_deepseek(c, j, false); }
void write_deepseek_v3(const ModelConfig& c, HfJson& j) { write_deepseek(c, j, true); }

void write_gpt_oss(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["attention_bias"] = c.attention.qkv_bias;
  j["num_local_experts"] = c.moe.num_experts;
  j["num_experts_per_tok"] = c.moe.top_k;
  j["experts_per_token"] = c.moe.top_k;
  j["intermediate_size"] = c.moe.expert_width;
  if (c.moe.clamped_swiglu) j["swiglu_limit"] = c.moe.clamped_swiglu->limit;  // alpha is the modeling code's
  j["sliding_window"] = c.attention.window;
  j["layer_types"] = HfJson::array();
  for (const auto kind : kinds(c))
    j["layer_types"].push_back(kind == LayerAttention::sliding ? "sliding_attention" : "full_attention");
}

void write_dbrx(const ModelConfig& c, HfJson& j) {
  j["vocab_size"] = c.vocab_size;
  j["d_model"] = c.hidden_size;
  j["n_layers"] = c.num_layers;
  j["max_seq_len"] = c.context_length;
  j["tie_word_embeddings"] = c.tie_embeddings;
  j["n_heads"] = c.attention.num_heads;
  // transformers 5's DbrxAttentionConfig has no rope_theta default (DbrxConfig
  // reads it from attn_config and cannot build without it); 10000 is the
  // default transformers 4 gave it. smelt does not model rotary settings.
  j["attn_config"] = {{"kv_n_heads", c.attention.num_kv_heads}, {"rope_theta", 10000.0}};
  j["ffn_config"] = {{"ffn_hidden_size", c.moe.expert_width},
                     {"moe_num_experts", c.moe.num_experts},
                     {"moe_top_k", c.moe.top_k},
                     {"moe_normalize_expert_weights", c.moe.renormalize ? HfJson(1.0) : HfJson(nullptr)}};
  j["torch_dtype"] = dtype_of(c);
}

// Llama 4: MoE layers every interleave_moe_layer_step (or listed in
// moe_layers), chunked layers where no_rope_layers holds 1.
void write_llama4_text(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["attention_bias"] = c.attention.qkv_bias;
  j["intermediate_size_mlp"] = c.ffn.dense_width;
  const auto& m = c.moe;
  j["num_local_experts"] = m.num_experts;
  j["num_experts_per_tok"] = m.top_k;
  j["intermediate_size"] = m.expert_width;
  if (m.layers.empty() && m.first_dense == 0 && m.phase == m.every - 1) {
    j["interleave_moe_layer_step"] = m.every;
  } else {
    j["interleave_moe_layer_step"] = 1;
    j["moe_layers"] = HfJson::array();
    const std::vector<bool> moe = moe_layer_flags(c);
    for (std::size_t i = 0; i < moe.size(); ++i)
      if (moe[i]) j["moe_layers"].push_back(i);
  }
  j["no_rope_layers"] = HfJson::array();
  for (const auto kind : kinds(c)) j["no_rope_layers"].push_back(kind == LayerAttention::chunked ? 1 : 0);
  j["attention_chunk_size"] = any_kind(c, LayerAttention::chunked) ? HfJson(c.attention.chunk) : HfJson(nullptr);
}

// The multimodal wrapper: the language model goes in text_config.
void write_llama4(const ModelConfig& c, HfJson& j) {
  HfJson text;
  text["model_type"] = "llama4_text";
  write_llama4_text(c, text);
  j["text_config"] = std::move(text);
}

// Ouro (config/hf_looped.cpp): the whole stack run total_ut_steps times, the
// sandwich norms, the exit gate and the per-step final norm all implied.
void write_ouro(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["intermediate_size"] = c.ffn.dense_width;
  write_qwen_window(c, j);
  std::int64_t steps = 1;
  for (const LoopConfig& l : c.loops)
    if (l.first == 1 && l.last == c.num_layers) steps = l.count;
  j["total_ut_steps"] = steps;
  j["early_exit_threshold"] = 1.0;  // OuroConfig's: run every step, read the last
}

// Huginn (config/hf_looped.cpp): prelude, the recurrent block and the coda
// from the one span; the sandwich, the adapter and ln_f's two uses implied.
void write_huginn(const ModelConfig& c, HfJson& j) {
  const LoopConfig span = c.loops.empty() ? LoopConfig{} : c.loops.front();
  const std::int64_t prelude = span.first > 0 ? span.first - 1 : 0;
  const std::int64_t core = span.first > 0 ? span.last - span.first + 1 : c.num_layers;
  j["n_embd"] = c.hidden_size;
  j["n_heads"] = c.attention.num_heads;
  j["num_key_value_heads"] = c.attention.num_kv_heads;
  j["head_dim"] = c.attention.head_dim;
  j["intermediate_size"] = c.ffn.dense_width;
  j["vocab_size"] = c.vocab_size;
  j["padded_vocab_size"] = c.vocab_size;
  j["block_size"] = c.context_length;
  j["n_layers"] = c.num_layers;
  j["n_layers_in_prelude"] = prelude;
  j["n_layers_in_recurrent_block"] = core;
  j["n_layers_in_coda"] = c.num_layers - prelude - core;
  j["mean_recurrence"] = span.count;
  j["mean_backprop_depth"] = span.backprop_passes;
  j["injection_type"] = "linear";
  j["qk_bias"] = c.attention.qk_bias;
  j["bias"] = false;
  j["tie_embeddings"] = c.tie_embeddings;
  j["block_class_name"] = "SandwichBlock";
  j["mlp_class_name"] = "GatedMLP";
  j["norm_class_name"] = "RMSNorm_llama";
  j["torch_dtype"] = dtype_of(c);
}

// Nanbeige4.2 (config/hf_looped.cpp): a Llama layer, the whole stack run num_loops times with the final norm
// after every loop (skip_loop_final_norm false) or once at the end (true); no loop writes num_loops 1.
void write_nanbeige(const ModelConfig& c, HfJson& j) {
  write_common(c, j);
  j["kv_channels"] = c.attention.head_dim;
  j["attention_bias"] = c.attention.qkv_bias;
  j["mlp_bias"] = c.ffn.bias;
  j["qk_layernorm"] = c.attention.qk_norm == QkNorm::per_head;
  j["intermediate_size"] = c.ffn.dense_width;
  LoopConfig stack{.count = 1};
  for (const LoopConfig& l : c.loops)
    if (l.first == 1 && l.last == c.num_layers) stack = l;
  j["num_loops"] = stack.count;
  j["loop_loss_weights"] = HfJson::array();
  j["skip_loop_final_norm"] = !stack.norm_each_pass;
}

// smelt's own class (python/smelt/hf): the native config, loops and all, and
// transformers' names for a few of its fields (config/hf_smelt.cpp).
void write_smelt(const ModelConfig& c, HfJson& j) {
  for (const config_detail::SmeltMirror& m : config_detail::smelt_mirrors(c)) j[std::string(m.key)] = m.value;
  j["smelt"] = config_detail::config_json(c);
}

}  // namespace

const std::vector<HfFamily>& hf_families() {
  static const std::vector<HfFamily> families{
      {"dbrx", "DbrxForCausalLM", write_dbrx},
      {"deepseek_v2", "DeepseekV2ForCausalLM", write_deepseek_v2},
      {"deepseek_v3", "DeepseekV3ForCausalLM", write_deepseek_v3},
      {"gpt_oss", "GptOssForCausalLM", write_gpt_oss},
      {"huginn_raven", "RavenForCausalLM", write_huginn, true},
      {"llama", "LlamaForCausalLM", write_llama},
      {"llama4", "Llama4ForConditionalGeneration", write_llama4},
      {"llama4_text", "Llama4ForCausalLM", write_llama4_text},
      {"mistral", "MistralForCausalLM", write_mistral},
      {"mixtral", "MixtralForCausalLM", write_mixtral},
      {"nanbeige", "NanbeigeForCausalLM", write_nanbeige, true},
      {"olmoe", "OlmoeForCausalLM", write_olmoe},
      {"ouro", "OuroForCausalLM", write_ouro, true},
      {"qwen2", "Qwen2ForCausalLM", write_qwen2},
      {"qwen2_moe", "Qwen2MoeForCausalLM", write_qwen2_moe},
      {"qwen3", "Qwen3ForCausalLM", write_qwen3},
      {"qwen3_moe", "Qwen3MoeForCausalLM", write_qwen3_moe},
      {"smelt", "SmeltForCausalLM", write_smelt, true},
  };
  return families;
}

}  // namespace smelt::export_detail
