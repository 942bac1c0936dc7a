// The keys and helpers the Hugging Face readers share (config/hf_import.cpp
// holds one reader per family): sizes under either of two names, lists of
// layers, the dtype of the KV cache and the keys most families spell alike.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "smelt/config.hpp"
#include "smelt/detail/bounds.hpp"
#include "util/json_reader.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

// Per-layer lists are built only up to the depth validate() accepts.
inline bool sane_depth(const ModelConfig& c) { return c.num_layers > 0 && c.num_layers <= kMaxLayers; }

// One entry per layer from rule(i), or nothing when num_layers is unusable
// (its violation is reported elsewhere).
template <typename T>
std::vector<T> per_layer(const ModelConfig& c, const std::function<T(std::int64_t)>& rule) {
  std::vector<T> out;
  for (std::int64_t i = 0; sane_depth(c) && i < c.num_layers; ++i) out.push_back(rule(i));
  return out;
}

// A list of integers; nullopt when absent or null.
std::optional<std::vector<std::int64_t>> integer_list(JsonObject& o, std::string_view key);

// Checks that a list of 0-based layer indices names real layers.
void check_layer_indices(JsonObject& o, std::string_view key, const std::vector<std::int64_t>& layers,
                         const ModelConfig& c);

std::int64_t derived_head_dim(const ModelConfig& c);

// The KV cache is held in the model's dtype: torch_dtype (or dtype in newer
// transformers); 2 bytes (bf16) when absent or not a plain float type.
std::int64_t dtype_bytes(JsonObject& o);

// A size saved under either of two names: transformers' attribute_map aliases
// (Qwen3MoeConfig saves num_experts as num_local_experts) and configs that
// carry both spellings. Either is enough (null counts as absent); when both
// are present they must agree.
std::int64_t either_integer(JsonObject& o, std::string_view key, std::string_view alias);

// The keys most families spell the same way.
void read_common(JsonObject& o, ModelConfig& c);

// attention_bias: one switch for the q, k, v and o projections (Llama, Qwen3, OLMoE, gpt-oss, Llama 4).
void read_attention_bias(JsonObject& o, ModelConfig& c, bool fallback);

// Qwen2/Qwen3 (dense and MoE) and Ouro: the window applies only with use_sliding_window,
// and then only to layers from max_window_layers on (default 28 in all four Qwen config classes).
std::vector<LayerAttention> qwen_kinds(JsonObject& o, const ModelConfig& c);

// The "loop" block of smelt's Hugging Face export (config/hf_loop.cpp); absent means no loop.
void read_hf_loop(JsonObject& root, ModelConfig& c);

}  // namespace smelt::config_detail
