// The Hugging Face readers' shared keys and helpers (config/hf_keys.hpp).
#include "config/hf_keys.hpp"

#include <fmt/format.h>

#include "smelt/detail/excerpt.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

using i64 = std::int64_t;

// A list of integers; nullopt when absent or null.
std::optional<std::vector<i64>> integer_list(JsonObject& o, std::string_view key) {
  const auto* v = o.raw(key);
  if (!v) return std::nullopt;
  if (!v->is_array()) {
    o.violation(key, detail::json_excerpt(*v), "must be a list of integers");
    return std::nullopt;
  }
  std::vector<i64> out;
  for (std::size_t i = 0; i < v->size(); ++i) {
    if ((*v)[i].is_number_integer())
      out.push_back((*v)[i].get<i64>());
    else if (o.violations().full())
      o.violations().count_unlisted();  // past the cap: counted, its message never built
    else
      o.violation(fmt::format("{}[{}]", key, i), detail::json_excerpt((*v)[i]), "must be an integer");
  }
  return out;
}

// Checks that a list of 0-based layer indices names real layers.
void check_layer_indices(JsonObject& o, std::string_view key, const std::vector<i64>& layers, const ModelConfig& c) {
  if (!sane_depth(c)) return;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (layers[i] >= 0 && layers[i] < c.num_layers) continue;
    if (o.violations().full())
      o.violations().count_unlisted();  // past the cap: counted, its message never built
    else
      o.violation(
          fmt::format("{}[{}] = {}: must be a 0-based layer in 0..{}", o.field(key), i, layers[i], c.num_layers - 1));
  }
}

i64 derived_head_dim(const ModelConfig& c) {
  return c.attention.num_heads > 0 ? c.hidden_size / c.attention.num_heads : 0;
}

// The KV cache is held in the model's dtype: torch_dtype (or dtype in newer
// transformers); 2 bytes (bf16) when absent or not a plain float type.
i64 dtype_bytes(JsonObject& o) {
  const std::string dtype = o.has("dtype") ? o.string("dtype", "") : o.string("torch_dtype", "");
  if (dtype == "float32") return 4;
  if (dtype.rfind("float8", 0) == 0) return 1;
  return 2;
}

// A size saved under either of two names: transformers' attribute_map aliases
// (Qwen3MoeConfig saves num_experts as num_local_experts) and configs that
// carry both spellings. Either is enough (null counts as absent); when both
// are present they must agree.
i64 either_integer(JsonObject& o, std::string_view key, std::string_view alias) {
  const bool has_key = o.raw(key) != nullptr;
  const bool has_alias = o.raw(alias) != nullptr;
  if (!has_key && !has_alias) {
    o.violation(fmt::format("{} (or {}): missing (required)", o.field(key), o.field(alias)));
    return 0;
  }
  if (!has_key) return o.integer(alias);
  const i64 value = o.integer(key);
  if (has_alias) {
    const i64 other = o.integer(alias, value);
    if (other != value)
      o.violation(fmt::format("{} = {}: must equal {} = {}", o.field(alias), other, o.field(key), value));
  }
  return value;
}

// The keys most families spell the same way.
void read_common(JsonObject& o, ModelConfig& c) {
  c.vocab_size = o.integer("vocab_size");
  c.hidden_size = o.integer("hidden_size");
  c.num_layers = o.integer("num_hidden_layers");
  c.context_length = o.integer("max_position_embeddings");
  c.tie_embeddings = o.boolean("tie_word_embeddings", false);
  c.attention.num_heads = o.integer("num_attention_heads");
  c.attention.num_kv_heads = o.integer("num_key_value_heads", c.attention.num_heads);
  c.kv_cache_bytes = dtype_bytes(o);
}

std::vector<LayerAttention> qwen_kinds(JsonObject& o, const ModelConfig& c) {
  const bool use = o.boolean("use_sliding_window", false) && o.raw("sliding_window") != nullptr;
  const std::int64_t from = o.integer("max_window_layers", 28);
  return per_layer<LayerAttention>(
      c, [&](std::int64_t i) { return use && i >= from ? LayerAttention::sliding : LayerAttention::full; });
}

// attention_bias: one switch for the q, k, v and o projections (Llama, Qwen3, OLMoE, gpt-oss, Llama 4).
void read_attention_bias(JsonObject& o, ModelConfig& c, bool fallback) {
  c.attention.qkv_bias = c.attention.out_bias = o.boolean("attention_bias", fallback);
}

}  // namespace smelt::config_detail
