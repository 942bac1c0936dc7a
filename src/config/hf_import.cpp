// Import of Hugging Face config.json files: one reader per model_type, each
// mapping that family's keys onto ModelConfig the way the family's
// transformers modeling code builds its modules. Unknown keys are fine (HF
// configs carry tokens ids, dtypes, rope settings that cost nothing here);
// missing or mistyped sizes are collected and reported together.
//
// Defaults: where a key may be absent, the fallback is the default of that
// family's transformers config class (named in a comment). tie_word_embeddings
// defaults to false in every supported class (LlamaConfig, MistralConfig,
// MixtralConfig, Qwen2/Qwen2Moe/Qwen3/Qwen3MoeConfig, OlmoeConfig,
// DeepseekV2/V3Config, GptOssConfig, DbrxConfig, Llama4Config/Llama4TextConfig).
#include "config/hf_import.hpp"
#include "config/hf_smelt.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/hf_keys.hpp"
#include "config/hf_looped.hpp"
#include "smelt/detail/bounds.hpp"
#include "smelt/detail/excerpt.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;
using Kinds = std::vector<LayerAttention>;  // attention kind of each layer, 0-based

// Mistral and Mixtral: sliding_window null means full attention everywhere,
// a number means every layer slides with that window.
Kinds mistral_kinds(JsonObject& o, const ModelConfig& c) {
  const bool sliding = o.raw("sliding_window") != nullptr;
  return per_layer<LayerAttention>(c, [&](i64) { return sliding ? LayerAttention::sliding : LayerAttention::full; });
}

// Qwen2-MoE/Qwen3-MoE experts: 0-based layer i is MoE when (i + 1) %
// decoder_sparse_step == 0 and i is not in mlp_only_layers; the other layers
// are dense of intermediate_size. Hub files say num_experts; Qwen3MoeConfig in
// transformers 5.x saves it as num_local_experts (its attribute_map).
void read_qwen_moe(JsonObject& o, ModelConfig& c) {
  c.moe.num_experts = either_integer(o, "num_experts", "num_local_experts");
  c.moe.top_k = o.integer("num_experts_per_tok");
  c.moe.expert_width = o.integer("moe_intermediate_size");
  c.moe.renormalize = o.boolean("norm_topk_prob", false);  // Qwen2MoeConfig and Qwen3MoeConfig: default false
  const i64 step = o.integer("decoder_sparse_step", 1);
  const auto dense_only = integer_list(o, "mlp_only_layers").value_or(std::vector<i64>{});
  check_layer_indices(o, "mlp_only_layers", dense_only, c);
  if (step < 1) {
    o.violation("decoder_sparse_step", fmt::format("{}", step), "must be positive");
    return;
  }
  c.moe.every = step;
  c.moe.phase = step - 1;
  if (dense_only.empty() || !sane_depth(c)) return;
  // A lookup per layer, not a search of the list: 65536 layers with 32768 dense ones stay one pass.
  std::vector<bool> dense(static_cast<std::size_t>(c.num_layers), false);
  for (const i64 i : dense_only)
    if (i >= 0 && i < c.num_layers) dense[static_cast<std::size_t>(i)] = true;
  for (i64 i = 0; i < c.num_layers; ++i)
    if ((i + 1) % step == 0 && !dense[static_cast<std::size_t>(i)]) c.moe.layers.push_back(i + 1);
  if (c.moe.layers.empty()) c.moe = MoeConfig{};  // every layer dense
}

Kinds read_llama(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));  // LlamaConfig: hidden / heads
  read_attention_bias(o, c, false);
  c.ffn.bias = o.boolean("mlp_bias", false);
  c.ffn.dense_width = o.integer("intermediate_size");
  return {};
}

Kinds read_mistral(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));  // MistralConfig: null -> hidden / heads
  c.ffn.dense_width = o.integer("intermediate_size");
  return mistral_kinds(o, c);
}

Kinds read_mixtral(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));  // MixtralConfig: null -> hidden / heads
  c.moe.num_experts = o.integer("num_local_experts");
  c.moe.top_k = o.integer("num_experts_per_tok");
  c.moe.expert_width = o.integer("intermediate_size");
  return mistral_kinds(o, c);
}

// Qwen2 has biases on q, k and v (not o), hard-coded in its modeling code.
Kinds read_qwen2(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));
  c.attention.qkv_bias = true;
  c.ffn.dense_width = o.integer("intermediate_size");
  return qwen_kinds(o, c);
}

// Qwen3 normalises each head's q and k with one RMSNorm(head_dim) each.
Kinds read_qwen3(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", 128);  // Qwen3Config default; not hidden / heads
  read_attention_bias(o, c, false);
  c.attention.qk_norm = QkNorm::per_head;
  c.ffn.dense_width = o.integer("intermediate_size");
  return qwen_kinds(o, c);
}

// Qwen1.5-MoE / Qwen2-MoE: one shared expert behind a sigmoid gate (Linear H
// -> 1). Unlike dense Qwen2, Qwen2MoeAttention builds its q/k/v biases from
// qkv_bias (Qwen2MoeConfig default true).
Kinds read_qwen2_moe(JsonObject& o, ModelConfig& c) {
  Kinds kinds = read_qwen2(o, c);
  c.attention.qkv_bias = o.boolean("qkv_bias", true);
  c.moe.shared_width = o.integer("shared_expert_intermediate_size");
  c.moe.num_shared_experts = c.moe.shared_width > 0 ? 1 : 0;
  c.moe.shared_gate = c.moe.num_shared_experts > 0;
  read_qwen_moe(o, c);  // last: it clears the MoE settings when no layer is MoE
  return kinds;
}

Kinds read_qwen3_moe(JsonObject& o, ModelConfig& c) {
  Kinds kinds = read_qwen3(o, c);
  read_qwen_moe(o, c);
  return kinds;
}

// OLMoE normalises q and k over all heads at once: RMSNorm(hidden) and RMSNorm(kv width).
Kinds read_olmoe(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", derived_head_dim(c));  // OlmoeConfig: hidden / heads
  read_attention_bias(o, c, false);
  c.attention.qk_norm = QkNorm::full;
  c.moe.num_experts = either_integer(o, "num_experts", "num_local_experts");  // OlmoeConfig's attribute_map
  c.moe.top_k = o.integer("num_experts_per_tok");
  c.moe.expert_width = o.integer("intermediate_size");
  c.moe.renormalize = o.boolean("norm_topk_prob", false);  // OlmoeConfig's default
  return {};
}

// DeepSeek-V2/V3: MLA, routed experts plus n_shared_experts shared ones of the
// same width; layer i is MoE when i >= first_k_dense_replace and i % moe_layer_freq == 0.
// DeepSeek-V3 (`v3`) routes as DeepseekV3TopkRouter does: sigmoid scores plus
// e_score_correction_bias, a persistent buffer of one value per expert that
// every V3 checkpoint stores, whatever topk_method says (5.x configs have no
// topk_method). DeepSeek-V2 has the bias only with topk_method "noaux_tc".
Kinds read_deepseek(JsonObject& o, ModelConfig& c, bool v3) {
  read_common(o, c);
  auto& a = c.attention;
  a.type = AttentionType::mla;
  a.num_kv_heads = 0;  // MLA caches the latent, not per-head keys and values
  // q_lora_rank is required, but null means queries are projected from the hidden state directly (V2-Lite).
  a.mla.q_lora_rank = o.has("q_lora_rank") ? o.integer("q_lora_rank", 0) : o.integer("q_lora_rank");
  a.mla.kv_lora_rank = o.integer("kv_lora_rank");
  a.mla.qk_nope_head_dim = o.integer("qk_nope_head_dim");
  a.mla.qk_rope_head_dim = o.integer("qk_rope_head_dim");
  a.mla.v_head_dim = o.integer("v_head_dim");
  // attention_bias puts biases on q/kv down-projections too, which smelt's MLA has no field for.
  if (o.boolean("attention_bias", false))
    o.violation(fmt::format("{} = true: not supported for MLA (no released DeepSeek model uses it)",
                            o.field("attention_bias")));
  c.ffn.dense_width = o.integer("intermediate_size");
  auto& m = c.moe;
  m.num_experts = o.integer("n_routed_experts");
  m.top_k = o.integer("num_experts_per_tok");
  m.expert_width = o.integer("moe_intermediate_size");
  m.num_shared_experts = o.integer("n_shared_experts", 0);  // DeepseekV2Config default: None
  m.shared_width = m.num_shared_experts > 0 ? m.expert_width : 0;
  m.first_dense = o.integer("first_k_dense_replace", 0);
  m.every = o.integer("moe_layer_freq", 1);
  if (m.every < 1) o.violation("moe_layer_freq", fmt::format("{}", m.every), "must be positive");
  const std::string scoring = o.string("scoring_func", v3 ? "sigmoid" : "softmax");
  if (scoring == "sigmoid")
    m.router_score = RouterScore::sigmoid;
  else if (scoring != "softmax")
    o.violation(fmt::format("{} = \"{}\": must be \"softmax\" or \"sigmoid\"", o.field("scoring_func"), scoring));
  const bool noaux_tc = o.string("topk_method", "greedy") == "noaux_tc";
  m.router_bias = v3 || noaux_tc;
  // DeepseekV3TopkRouter's form (the bias is its correction bias, under softmax scores too; softmax without a
  // bias is the plain form, the same weights); V3 divides by the chosen weights' sum by norm_topk_prob
  // (DeepseekV3Config: default true), V2's router never does.
  m.router_form = m.router_bias || m.router_score == RouterScore::sigmoid ? RouterForm::deepseek : RouterForm::plain;
  m.renormalize = v3 && o.boolean("norm_topk_prob", true);
  c.mtp_modules = o.integer("num_nextn_predict_layers", 0);
  return {};
}

Kinds read_deepseek_v2(JsonObject& o, ModelConfig& c) { return read_deepseek(o, c, false); }
Kinds read_deepseek_v3(JsonObject& o, ModelConfig& c) { return read_deepseek(o, c, true); }

// gpt-oss: biased attention with one sink logit per head, alternating sliding
// and full layers, biased experts and router.
Kinds read_gpt_oss(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  c.attention.head_dim = o.integer("head_dim", 64);  // GptOssConfig default
  read_attention_bias(o, c, true);                   // GptOssConfig default
  c.attention.sinks = true;
  c.ffn.bias = true;
  c.moe.router_bias = true;
  c.moe.num_experts = o.integer("num_local_experts");
  c.moe.expert_width = o.integer("intermediate_size");
  // The released configs carry both spellings; the modeling code reads num_experts_per_tok.
  c.moe.top_k = either_integer(o, "num_experts_per_tok", "experts_per_token");
  // GptOssExperts' clamped SwiGLU: alpha fixed at 1.702 in the modeling code, the limit from the config.
  c.moe.clamped_swiglu = MoeConfig::ClampedSwiglu{1.702, o.number("swiglu_limit", 7.0)};
  // GptOssConfig's default layer_types: sliding on even layers, full on odd ones.
  return per_layer<LayerAttention>(
      c, [](i64 i) { return (i + 1) % 2 != 0 ? LayerAttention::sliding : LayerAttention::full; });
}

// DBRX spells everything its own way and nests attention and FFN settings.
Kinds read_dbrx(JsonObject& o, ModelConfig& c) {
  c.vocab_size = o.integer("vocab_size");
  c.hidden_size = o.integer("d_model");
  c.num_layers = o.integer("n_layers");
  c.context_length = o.integer("max_seq_len");
  c.tie_embeddings = o.boolean("tie_word_embeddings", false);
  c.attention.num_heads = o.integer("n_heads");
  c.attention.head_dim = derived_head_dim(c);  // DBRX's attention always uses d_model / n_heads
  c.kv_cache_bytes = dtype_bytes(o);
  if (auto at = o.object("attn_config")) c.attention.num_kv_heads = at->integer("kv_n_heads");
  if (auto f = o.object("ffn_config")) {
    c.moe.expert_width = f->integer("ffn_hidden_size");
    c.moe.num_experts = f->integer("moe_num_experts");
    c.moe.top_k = f->integer("moe_top_k");
    // The chosen weights divided by their p-norm (DbrxFFNConfig: p = 1, their sum); null: not divided.
    if (f->has("moe_normalize_expert_weights") && f->raw("moe_normalize_expert_weights") == nullptr) {
      c.moe.renormalize = false;  // null
    } else if (const double norm = f->number("moe_normalize_expert_weights", 1.0); norm != 1.0) {
      f->violation("moe_normalize_expert_weights", fmt::format("{}", norm),
                   "must be 1 (the weights divided by their sum) or null (not divided): smelt has no other p-norm");
    }
  }
  // DBRX norms are LayerNorm(bias=False): one weight vector each, the same
  // parameter count as RMSNorm, which is what NormType decides here.
  c.norm = NormType::rmsnorm;
  return {};
}

// Llama 4 text model: every MoE layer has one always-on shared expert of the
// expert width; dense layers use intermediate_size_mlp. Layers that use RoPE
// attend within chunks of attention_chunk_size; the NoPE layers attend globally.
Kinds read_llama4_text(JsonObject& o, ModelConfig& c) {
  read_common(o, c);
  auto& a = c.attention;
  a.head_dim = o.integer("head_dim", 128);  // Llama4TextConfig default
  read_attention_bias(o, c, false);
  // use_qk_norm is an L2 norm without weights: it adds no parameters, so QkNorm stays none.
  (void)o.boolean("use_qk_norm", true);
  c.ffn.dense_width = o.integer("intermediate_size_mlp");
  auto& m = c.moe;
  m.num_experts = o.integer("num_local_experts");
  m.top_k = o.integer("num_experts_per_tok");
  m.expert_width = o.integer("intermediate_size");
  m.num_shared_experts = 1;
  m.shared_width = m.expert_width;
  m.router_score = RouterScore::sigmoid;
  m.router_form = RouterForm::llama4;  // Llama4Router: top-k of the logits, the sigmoid weighs the input
  m.renormalize = false;
  const i64 step = o.integer("interleave_moe_layer_step", 1);
  if (step < 1) {
    o.violation("interleave_moe_layer_step", fmt::format("{}", step), "must be positive");
  } else {
    m.every = step;
    m.phase = step - 1;
  }
  // moe_layers (0-based), when given, is what the modeling code consults.
  if (auto listed = integer_list(o, "moe_layers"); listed && step >= 1) {
    check_layer_indices(o, "moe_layers", *listed, c);
    std::vector<i64> by_rule;
    for (i64 i = step - 1; sane_depth(c) && i < c.num_layers; i += step) by_rule.push_back(i);
    std::sort(listed->begin(), listed->end());
    if (*listed != by_rule) {
      for (const i64 layer : *listed) m.layers.push_back(layer + 1);
      if (m.layers.empty()) m = MoeConfig{};
    }
  }
  // no_rope_layers[i] = 1: layer i uses RoPE (chunked); absent or empty: every
  // 4th layer is NoPE (Llama4TextConfig's no_rope_layer_interval).
  auto rope = integer_list(o, "no_rope_layers").value_or(std::vector<i64>{});
  if (rope.empty()) rope = per_layer<i64>(c, [](i64 i) { return (i + 1) % 4 != 0 ? 1 : 0; });
  if (sane_depth(c) && static_cast<i64>(rope.size()) != c.num_layers)
    o.violation(fmt::format("{} has {} entries: must have num_hidden_layers = {}", o.field("no_rope_layers"),
                            rope.size(), c.num_layers));
  const bool chunking = !o.has("attention_chunk_size") || o.raw("attention_chunk_size") != nullptr;
  Kinds kinds;
  for (std::size_t i = 0; i < rope.size(); ++i) {
    if (rope[i] != 0 && rope[i] != 1)
      o.violation(fmt::format("no_rope_layers[{}]", i), fmt::format("{}", rope[i]), "must be 0 or 1");
    kinds.push_back(rope[i] == 1 && chunking ? LayerAttention::chunked : LayerAttention::full);
  }
  return kinds;
}

// HF's per-layer "layer_types", which newer configs of several families carry;
// nullopt when absent.
std::optional<Kinds> layer_types(JsonObject& o, const ModelConfig& c) {
  const auto* v = o.raw("layer_types");
  if (!v) return std::nullopt;
  const std::string field = o.field("layer_types");
  if (!v->is_array()) {
    o.violation(fmt::format("{} = {}: must be a list of attention kinds", field, detail::json_excerpt(*v)));
    return std::nullopt;
  }
  Kinds kinds;
  for (std::size_t i = 0; i < v->size(); ++i) {
    const auto& e = (*v)[i];
    const std::string word = e.is_string() ? e.get<std::string>() : "";
    if (word == "full_attention")
      kinds.push_back(LayerAttention::full);
    else if (word == "sliding_attention")
      kinds.push_back(LayerAttention::sliding);
    else if (word == "chunked_attention")
      kinds.push_back(LayerAttention::chunked);
    else if (o.violations().full())
      o.violations().count_unlisted();  // past the cap: counted, its message never built
    else
      o.violation(fmt::format("{}[{}] = {}: must be \"full_attention\", \"sliding_attention\" or \"chunked_attention\"",
                              field, i, detail::json_excerpt(e)));
  }
  if (sane_depth(c) && static_cast<i64>(v->size()) != c.num_layers)
    o.violation(fmt::format("{} has {} entries: must have num_hidden_layers = {}", field, v->size(), c.num_layers));
  return kinds;
}

// The shortest prefix whose cyclic repetition reproduces every layer's kind.
Kinds shortest_cycle(const Kinds& kinds) {
  for (std::size_t p = 1; p < kinds.size(); ++p) {
    bool repeats = true;
    for (std::size_t i = p; i < kinds.size() && repeats; ++i) repeats = kinds[i] == kinds[i % p];
    if (repeats) return Kinds(kinds.begin(), kinds.begin() + static_cast<std::ptrdiff_t>(p));
  }
  return kinds;
}

// Sets the attention pattern and, when a layer needs it, its window or chunk.
void set_pattern(JsonObject& o, ModelConfig& c, const Kinds& family_kinds) {
  const Kinds kinds = layer_types(o, c).value_or(family_kinds);
  auto& a = c.attention;
  a.pattern = kinds.empty() ? Kinds{LayerAttention::full} : shortest_cycle(kinds);
  const auto uses = [&](LayerAttention k) {
    return std::find(a.pattern.begin(), a.pattern.end(), k) != a.pattern.end();
  };
  if (uses(LayerAttention::sliding)) a.window = o.integer("sliding_window");
  if (uses(LayerAttention::chunked)) a.chunk = o.integer("attention_chunk_size", 8192);  // Llama4TextConfig default
}

// A rule that selects no layer makes the model dense, as in the HF modeling code.
void drop_unused_moe(ModelConfig& c) {
  if (!c.is_moe() || !sane_depth(c) || c.moe.every < 1) return;
  for (i64 i = 0; i < c.num_layers; ++i)
    if (c.is_moe_layer(i)) return;
  c.moe = MoeConfig{};
}

using Reader = Kinds (*)(JsonObject&, ModelConfig&);

struct Family {
  std::string_view model_type;
  Reader read;
};

constexpr std::array<Family, 17> kFamilies{{
    {"dbrx", read_dbrx},
    {"deepseek_v2", read_deepseek_v2},
    {"deepseek_v3", read_deepseek_v3},
    {"gpt_oss", read_gpt_oss},
    {"huginn_raven", read_huginn},
    {"llama", read_llama},
    {"llama4", read_llama4_text},  // reads "text_config"
    {"llama4_text", read_llama4_text},
    {"mistral", read_mistral},
    {"mixtral", read_mixtral},
    {"nanbeige", read_nanbeige},
    {"olmoe", read_olmoe},
    {"ouro", read_ouro},
    {"qwen2", read_qwen2},
    {"qwen2_moe", read_qwen2_moe},
    {"qwen3", read_qwen3},
    {"qwen3_moe", read_qwen3_moe},
}};

}  // namespace

std::vector<std::string> hf_model_types() {
  std::vector<std::string> out;
  for (const auto& f : kFamilies) out.emplace_back(f.model_type);
  out.emplace_back("smelt");  // smelt's own class (config/hf_smelt.cpp)
  std::sort(out.begin(), out.end());
  return out;
}

ModelConfig import_hf(const nlohmann::json& json, std::string_view source) {
  Violations violations;
  JsonObject root(json, "", violations);
  const std::string type = root.string("model_type");
  violations.throw_if_any();
  if (type == "smelt") return import_smelt(json, source);
  const auto family =
      std::find_if(kFamilies.begin(), kFamilies.end(), [&](const Family& f) { return f.model_type == type; });
  if (family == kFamilies.end())
    throw config_error(fmt::format("model_type = \"{}\": not supported; supported: {}", excerpt(type),
                                   fmt::join(hf_model_types(), ", ")));

  ModelConfig c;
  c.name = root.string("_name_or_path", "");
  if (c.name.empty()) c.name = type;
  if (type == "llama4") {
    // The multimodal wrapper: the language model is text_config; the vision
    // encoder is not counted. transformers ties the head from
    // text_config.tie_word_embeddings (Llama4ForConditionalGeneration and
    // Llama4ForCausalLM alike); a top-level flag is ignored, so it is not read.
    if (auto text = root.object("text_config")) set_pattern(*text, c, family->read(*text, c));
  } else {
    set_pattern(root, c, family->read(root, c));
  }
  drop_unused_moe(c);
  read_hf_loop(root, c);
  violations.throw_if_any();
  return c;
}

}  // namespace smelt::config_detail
