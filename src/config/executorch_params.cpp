// ExecuTorch's Llama params.json (config/executorch_params.hpp). Keys and
// defaults are ModelArgs' (pytorch/executorch, examples/models/llama/
// model_args.py at 70e557bd0d8292124ff4256adf8030cae9fb95e2): n_kv_heads
// defaults to n_heads, head_dim to dim // n_heads, max_seq_len to 2048, and
// hidden_dim, when absent, to int(2 * 4 * dim / 3), times ffn_dim_multiplier
// when given, rounded up to a multiple of multiple_of (256). The output head is
// its own Linear (untied). block_repeat_config, a list of {"start", "end",
// "count"}, runs layers start..end-1 (0-based, end exclusive, as Python's
// slices of the layer list) count times in all, with the same weights and no
// residual scale (docs/config.md, section 2.5: the one reading of a key whose
// implementation was proposed in ExecuTorch PR #19164 and not merged).
#include "config/executorch_params.hpp"

#include <fmt/format.h>

#include "smelt/detail/bounds.hpp"
#include "smelt/detail/violations.hpp"
#include "util/json_reader.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares
namespace {

using i64 = std::int64_t;

// ModelArgs.__post_init__'s FFN width when hidden_dim is absent.
i64 default_hidden_dim(JsonObject& o, i64 dim) {
  // Bounded before the rounding below adds it to the width.
  const i64 multiple_of = o.integer("multiple_of", 256);
  if (multiple_of < 1 || multiple_of > kMaxWidth) {
    o.violations().range(o.field("multiple_of"), multiple_of, 1, kMaxWidth);
    return 0;
  }
  if (dim < 1 || dim > kMaxWidth) return 0;  // dim's own violation is reported
  i64 h = (2 * 4 * dim) / 3;                 // int(2 * (4 * dim) / 3): a floor for positive values
  if (const auto* m = o.raw("ffn_dim_multiplier"); m != nullptr && !m->is_null()) {
    const double k = o.number("ffn_dim_multiplier");
    if (!(k > 0 && k * static_cast<double>(h) < static_cast<double>(kMaxWidth))) {
      o.violation("ffn_dim_multiplier", fmt::format("{}", k),
                  fmt::format("must be positive and keep the FFN width under {}", kMaxWidth));
      return 0;
    }
    h = static_cast<i64>(k * static_cast<double>(h));
  }
  // h is under 3 x kMaxWidth and multiple_of at most kMaxWidth: the sum and the product stay far inside 64 bits.
  const i64 width = multiple_of * ((h + multiple_of - 1) / multiple_of);
  if (width > kMaxWidth)
    o.violation("hidden_dim", "absent",
                fmt::format("its default from dim = {} and multiple_of = {} is {}: must be at most {}", dim,
                            multiple_of, width, kMaxWidth));
  return width;
}

void read_block_repeats(JsonObject& o, ModelConfig& c) {
  const auto* list = o.raw("block_repeat_config");
  if (list == nullptr || list->is_null()) return;
  if (!list->is_array()) {
    o.violation("block_repeat_config", json_excerpt(*list), "must be a list of {\"start\", \"end\", \"count\"}");
    return;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string field = fmt::format("block_repeat_config[{}]", i);
    if (!(*list)[i].is_object()) {
      o.violation(field, json_excerpt((*list)[i]), "must be an object");
      continue;
    }
    JsonObject r((*list)[i], o.field(field), o.violations());
    const i64 start = r.integer("start");
    const i64 end = r.integer("end");
    const i64 count = r.integer("count");
    r.reject_unknown_keys();
    if (start < 0 || end <= start || end > c.num_layers) {
      o.violation(field, fmt::format("{{\"start\": {}, \"end\": {}}}", start, end),
                  fmt::format("must satisfy 0 <= start < end <= n_layers = {} (0-based, end exclusive)", c.num_layers));
      continue;
    }
    c.loops.push_back({.first = start + 1, .last = end, .count = count, .residual_scale = 1.0});
  }
}

}  // namespace

ModelConfig import_executorch(const nlohmann::json& json, std::string_view source) {
  Violations violations;
  JsonObject o(json, "", violations);
  (void)source;
  ModelConfig c;
  c.hidden_size = o.integer("dim");
  c.num_layers = o.integer("n_layers");
  c.vocab_size = o.integer("vocab_size");
  c.context_length = o.integer("max_seq_len", 2048);
  c.attention.num_heads = o.integer("n_heads");
  c.attention.num_kv_heads = o.integer("n_kv_heads", c.attention.num_heads);
  c.attention.head_dim = o.integer("head_dim", c.attention.num_heads > 0 ? c.hidden_size / c.attention.num_heads : 0);
  c.attention.qkv_bias = o.boolean("attention_qkv_bias", false);
  if (o.boolean("use_qk_norm", false)) c.attention.qk_norm = QkNorm::per_head;
  const std::string norm = o.string("norm_type", "rmsnorm");
  if (norm != "rmsnorm")
    o.violation("norm_type", fmt::format("\"{}\"", norm), "must be \"rmsnorm\" (the one norm smelt reads here)");
  const bool post_attention = o.boolean("post_attention_norm", false);
  const bool post_ffn = o.boolean("post_ffn_norm", false);
  if (post_attention != post_ffn)
    o.violation("post_ffn_norm", post_ffn ? "true" : "false",
                "must equal post_attention_norm: smelt's sandwich norms both sublayers");
  if (post_attention && post_ffn) c.norm_placement = NormPlacement::sandwich;
  for (const char* key : {"moe", "output_bias", "use_ffn_norm"})
    if (o.boolean(key, false)) o.violation(key, "true", "not read: this params.json reader has no such layer");
  if (const auto* kinds = o.raw("layer_types"); kinds != nullptr && !kinds->is_null())
    o.violation("layer_types", json_excerpt(*kinds), "not read: this reader takes every layer as full attention");
  c.ffn.dense_width = o.raw("hidden_dim") != nullptr && !o.raw("hidden_dim")->is_null()
                          ? o.integer("hidden_dim")
                          : default_hidden_dim(o, c.hidden_size);
  read_block_repeats(o, c);
  violations.throw_if_any();
  return c;
}

nlohmann::ordered_json executorch_params(const ModelConfig& c) {
  nlohmann::ordered_json j;
  j["dim"] = c.hidden_size;
  j["n_layers"] = c.num_layers;
  j["n_heads"] = c.attention.num_heads;
  j["n_kv_heads"] = c.attention.num_kv_heads;
  j["head_dim"] = c.attention.head_dim;
  j["vocab_size"] = c.vocab_size;
  j["hidden_dim"] = c.ffn.dense_width;
  j["max_seq_len"] = c.context_length;
  j["norm_type"] = "rmsnorm";
  j["attention_qkv_bias"] = c.attention.qkv_bias;
  j["use_qk_norm"] = c.attention.qk_norm == QkNorm::per_head;
  j["post_attention_norm"] = c.norm_placement == NormPlacement::sandwich;
  j["post_ffn_norm"] = c.norm_placement == NormPlacement::sandwich;
  nlohmann::ordered_json repeats = nlohmann::ordered_json::array();
  for (const LoopConfig& l : c.loops)
    if (l.first > 0) repeats.push_back({{"start", l.first - 1}, {"end", l.last}, {"count", l.count}});
  if (!repeats.empty()) j["block_repeat_config"] = std::move(repeats);
  return j;
}

}  // namespace smelt::config_detail
