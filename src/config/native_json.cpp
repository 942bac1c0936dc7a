// smelt's native config format: reading with full checking, and the canonical
// writer whose output reads back to the same bytes.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>

#include "config/enum_find.hpp"
#include "config/native_json.hpp"
#include "config/validate_fields.hpp"
#include "smelt/config_io.hpp"
#include "smelt/detail/violations.hpp"
#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt {
namespace {

constexpr std::int64_t kSchemaVersion = 1;

// Runs a word parser, turning its error into a collected violation.
template <typename Parse>
auto parse_word(detail::JsonObject& o, std::string_view key, std::string fallback, Parse parse) {
  const std::string word = o.string(key, std::move(fallback));
  try {
    return parse(word, o.field(key));
  } catch (const config_error& e) {
    for (const auto& v : e.violations()) o.violation(v);
    return decltype(parse(word, ""))();
  }
}

// A list of words under `key`, each looked up by `find` (config_detail::find_layer_attention, ...); every bad entry is
// collected, its message from `parse` (parse_layer_attention, ...). Past the collector's cap a bad entry is only
// counted: its message, a thrown config_error, costs microseconds that a 64 MiB list of bad words would multiply
// into half a minute.
template <typename Find, typename Parse>
auto word_list(detail::JsonObject& o, std::string_view key, std::string_view rule, Find find, Parse parse) {
  std::vector<decltype(parse("", ""))> out;
  const auto* list = o.raw(key);
  if (!list->is_array()) o.violation(key, detail::json_excerpt(*list), std::string(rule));
  for (std::size_t i = 0; list->is_array() && i < list->size(); ++i) {
    const auto& entry = (*list)[i];
    if (entry.is_string())
      if (const auto value = find(entry.get_ref<const std::string&>())) {
        out.push_back(*value);
        continue;
      }
    if (o.violations().full()) {
      o.violations().count_unlisted();
      continue;
    }
    const std::string field = fmt::format("{}[{}]", o.field(key), i);
    if (!entry.is_string()) {
      o.violation(Violation(field, detail::json_excerpt(entry), "must be a string"));
      continue;
    }
    try {
      (void)parse(entry.get_ref<const std::string&>(), field);  // throws the message of a word find did not know
    } catch (const config_error& e) {
      for (const auto& v : e.violations()) o.violation(v);
    }
  }
  return out;
}

void read_attention(detail::JsonObject a, ModelConfig& c) {
  auto& at = c.attention;
  at.type = parse_word(a, "type", "gqa", parse_attention_type);
  at.num_heads = a.integer("num_heads");
  if (at.type == AttentionType::gqa) {
    at.num_kv_heads = a.integer("num_kv_heads");
    at.head_dim = a.integer("head_dim");
  } else {
    at.mla.q_lora_rank = a.integer("q_lora_rank", 0);
    at.mla.kv_lora_rank = a.integer("kv_lora_rank");
    at.mla.qk_nope_head_dim = a.integer("qk_nope_head_dim");
    at.mla.qk_rope_head_dim = a.integer("qk_rope_head_dim");
    at.mla.v_head_dim = a.integer("v_head_dim");
  }
  at.qkv_bias = a.boolean("qkv_bias", false);
  at.qk_bias = a.boolean("qk_bias", false);
  at.out_bias = a.boolean("out_bias", false);
  at.qk_norm = parse_word(a, "qk_norm", "none", parse_qk_norm);
  at.sinks = a.boolean("sinks", false);
  if (a.raw("pattern") != nullptr)
    at.pattern = word_list(a, "pattern", "must be an array of \"full\", \"sliding\" or \"chunked\"",
                           config_detail::find_layer_attention, parse_layer_attention);
  at.window = a.integer("window", 0);
  at.chunk = a.integer("chunk", 0);
  a.reject_unknown_keys();
}

void read_moe(detail::JsonObject m, ModelConfig& c) {
  auto& moe = c.moe;
  moe.num_experts = m.integer("num_experts");
  moe.top_k = m.integer("top_k");
  moe.expert_width = m.integer("expert_width");
  moe.num_shared_experts = m.integer("num_shared_experts", 0);
  moe.shared_width = m.integer("shared_width", 0);
  moe.shared_gate = m.boolean("shared_gate", false);
  moe.router_bias = m.boolean("router_bias", false);
  moe.router_score = parse_word(m, "router_score", "softmax", parse_router_score);
  moe.router_form = parse_word(m, "router_form", std::string(to_string(default_router_form(moe))), parse_router_form);
  moe.renormalize = m.boolean("renormalize", default_renormalize(moe.router_form));
  if (auto clamp = m.object("clamped_swiglu", true)) {
    moe.clamped_swiglu = MoeConfig::ClampedSwiglu{clamp->number("alpha"), clamp->number("limit")};
    clamp->reject_unknown_keys();
  }
  if (const auto* layers = m.raw("layers")) {
    if (layers->is_array()) {
      for (std::size_t i = 0; i < layers->size(); ++i) {
        if ((*layers)[i].is_number_integer())
          moe.layers.push_back((*layers)[i].get<std::int64_t>());
        else if (m.violations().full())
          m.violations().count_unlisted();  // past the cap: counted, its message never built
        else
          m.violation(fmt::format("layers[{}]", i), detail::json_excerpt((*layers)[i]), "must be an integer");
      }
      if (layers->empty()) m.violation("layers", "[]", "must list at least one layer");
    } else if (layers->is_object()) {
      detail::JsonObject rule(*layers, m.field("layers"), m.violations());
      moe.first_dense = rule.integer("first_dense", 0);
      moe.every = rule.integer("every", 1);
      moe.phase = rule.integer("phase", 0);
      rule.reject_unknown_keys();
    } else {
      m.violation("layers", detail::json_excerpt(*layers),
                  "must be a list of 1-based layers or {\"first_dense\", \"every\", \"phase\"}");
    }
  }
  m.reject_unknown_keys();
}

LoopConfig read_loop(detail::JsonObject l) {
  LoopConfig loop;
  const std::string span = l.string("span");
  if (!span.empty()) {
    try {
      parse_span(span, l.field("span"), loop);
    } catch (const config_error& e) {
      for (const auto& v : e.violations()) l.violation(v);
    }
  }
  loop.count = l.integer("count", 2);
  loop.residual_scale = l.number("residual_scale", loop.count > 0 ? 1.0 / static_cast<double>(loop.count) : 1.0);
  loop.norm_each_pass = l.boolean("norm_each_pass", false);
  loop.exit_gate = l.boolean("exit_gate", false);
  loop.injection = parse_word(l, "injection", "none", parse_injection);
  loop.injection_bias = l.boolean("injection_bias", false);
  loop.norm_after = l.boolean("norm_after", false);
  loop.backprop_passes = l.integer("backprop_passes", 0);
  loop.kv_policy = parse_word(l, "kv_policy", "per_visit", parse_kv_policy);
  if (const auto* k = l.raw("kv_keep"); k != nullptr && !k->is_null()) {
    if (!k->is_array()) l.violation("kv_keep", detail::json_excerpt(*k), "must be a list of fractions in (0, 1]");
    for (std::size_t i = 0; k->is_array() && i < k->size(); ++i) {
      if ((*k)[i].is_number())
        loop.kv_keep.push_back((*k)[i].get<double>());
      else if (l.violations().full())
        l.violations().count_unlisted();
      else
        l.violation(fmt::format("kv_keep[{}]", i), detail::json_excerpt((*k)[i]), "must be a number");
    }
  }
  loop.lora_rank = l.integer("lora_rank", 0);
  if (const auto* t = l.raw("lora_targets"); t != nullptr && !t->is_null())
    loop.lora_targets =
        word_list(l, "lora_targets", "must be a list of \"q\", \"k\", \"v\", \"o\", \"gate\", \"up\", \"down\"",
                  config_detail::find_lora_target, parse_lora_target);
  l.reject_unknown_keys();
  return loop;
}

// "loop": one span (the SMELT recipe), or "loops": a list of them, never both.
void read_loops(detail::JsonObject& root, ModelConfig& c) {
  if (auto l = root.object("loop", true)) c.loops.push_back(read_loop(*l));
  const auto* list = root.raw("loops");
  if (list == nullptr || list->is_null()) return;
  if (!c.loops.empty()) {
    root.violation("loops", detail::json_excerpt(*list),
                   "give either \"loop\" (one span) or \"loops\" (several), not both");
    return;
  }
  if (!list->is_array() || list->empty()) {
    root.violation("loops", detail::json_excerpt(*list), "must be a non-empty list of {\"span\", \"count\", ...}");
    return;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string field = fmt::format("{}[{}]", root.field("loops"), i);
    if (!(*list)[i].is_object()) {
      root.violation(fmt::format("loops[{}]", i), detail::json_excerpt((*list)[i]), "must be an object");
      continue;
    }
    c.loops.push_back(read_loop(detail::JsonObject((*list)[i], field, root.violations())));
  }
}

// True when a problem reported on field `reported` explains one on `field`:
// the same field, or a field inside the reported object. A message about no
// field explains none.
bool covers(std::string_view reported, std::string_view field) {
  if (reported.empty()) return false;
  return field == reported || (field.size() > reported.size() && field.substr(0, reported.size()) == reported &&
                               field[reported.size()] == '.');
}

// Reading found problems; the rules may find more in the fields that did read
// well. Report both, skipping rule violations on fields already reported (`root` names them as reading did: under
// "smelt." in a model_type "smelt" file).
void merge_rule_violations(const ModelConfig& c, detail::Violations& violations, const detail::JsonObject& root) {
  try {
    config_detail::validate_fields(c);
  } catch (const config_error& e) {
    for (const auto& rule : e.violations()) {
      const auto& listed = violations.list();
      const bool seen = std::any_of(listed.begin(), listed.end(), [&](const Violation& v) {
        return covers(v.field, rule.field.empty() ? rule.field : root.field(rule.field));
      });
      if (!seen) violations.add(rule);
    }
  }
}

}  // namespace

ModelConfig config_detail::read_native_config(std::string_view text, std::string_view source) {
  return native_config_from_json(detail::parse_json_text(text, source), source);
}

ModelConfig config_detail::native_config_from_json(const nlohmann::json& json, std::string_view source,
                                                   std::string path) {
  detail::Violations violations;
  ModelConfig c;
  if (!json.is_object())
    throw config_error(fmt::format("{}: {} must be a JSON object", source, path.empty() ? "top level" : path));
  detail::JsonObject root(json, std::move(path), violations);
  const std::int64_t version = root.integer("schema_version");
  if (violations.empty() && version != kSchemaVersion)  // other versions mean other fields: stop here
    throw config_error(
        Violation(root.field("schema_version"), fmt::format("{}", version), fmt::format("must be {}", kSchemaVersion)));
  c.name = root.string("name", "");
  c.vocab_size = root.integer("vocab_size");
  c.tie_embeddings = root.boolean("tie_embeddings", false);
  c.num_layers = root.integer("num_layers");
  c.hidden_size = root.integer("hidden_size");
  c.norm = parse_word(root, "norm", "rmsnorm", parse_norm_type);
  c.norm_placement = parse_word(root, "norm_placement", "pre", parse_norm_placement);
  c.context_length = root.integer("context_length", 4096);
  c.kv_cache_bytes = root.integer("kv_cache_bytes", 2);
  if (auto a = root.object("attention")) read_attention(*a, c);
  if (auto f = root.object("ffn", true)) {
    c.ffn.type = parse_word(*f, "type", "gated", parse_ffn_type);
    c.ffn.bias = f->boolean("bias", false);
    c.ffn.dense_width = f->integer("dense_width", 0);
    f->reject_unknown_keys();
  }
  if (auto m = root.object("moe", true)) read_moe(*m, c);
  read_loops(root, c);
  c.mtp_modules = root.integer("mtp_modules", 0);
  root.reject_unknown_keys();
  if (!violations.empty()) {
    merge_rule_violations(c, violations, root);
    violations.throw_if_any();
  }
  config_detail::validate_fields(c);
  return c;
}

nlohmann::ordered_json config_detail::loop_json(const LoopConfig& l) {
  nlohmann::ordered_json s{{"span", format_span(l)}, {"count", l.count}, {"residual_scale", l.residual_scale}};
  if (l.norm_each_pass) s["norm_each_pass"] = true;  // written only when set: SMELT configs read as before
  if (l.exit_gate) s["exit_gate"] = true;
  if (l.injection != Injection::none) s["injection"] = to_string(l.injection);
  if (l.injection_bias) s["injection_bias"] = true;
  if (l.norm_after) s["norm_after"] = true;
  if (l.backprop_passes != 0) s["backprop_passes"] = l.backprop_passes;
  if (l.kv_policy != KvPolicy::per_visit) s["kv_policy"] = to_string(l.kv_policy);
  if (!l.kv_keep.empty()) s["kv_keep"] = l.kv_keep;
  if (l.lora_rank != 0 || !l.lora_targets.empty()) {
    s["lora_rank"] = l.lora_rank;
    s["lora_targets"] = nlohmann::ordered_json::array();
    for (const LoraTarget t : l.lora_targets) s["lora_targets"].push_back(to_string(t));
  }
  return s;
}

nlohmann::ordered_json config_detail::config_json(const ModelConfig& c) {
  using nlohmann::ordered_json;
  ordered_json j;
  j["schema_version"] = kSchemaVersion;
  j["name"] = c.name;
  j["vocab_size"] = c.vocab_size;
  j["tie_embeddings"] = c.tie_embeddings;
  j["num_layers"] = c.num_layers;
  j["hidden_size"] = c.hidden_size;
  j["norm"] = to_string(c.norm);
  if (c.norm_placement != NormPlacement::pre) j["norm_placement"] = to_string(c.norm_placement);
  j["context_length"] = c.context_length;
  j["kv_cache_bytes"] = c.kv_cache_bytes;

  const auto& a = c.attention;
  ordered_json at;
  at["type"] = to_string(a.type);
  at["num_heads"] = a.num_heads;
  if (a.type == AttentionType::gqa) {
    at["num_kv_heads"] = a.num_kv_heads;
    at["head_dim"] = a.head_dim;
  } else {
    at["q_lora_rank"] = a.mla.q_lora_rank;
    at["kv_lora_rank"] = a.mla.kv_lora_rank;
    at["qk_nope_head_dim"] = a.mla.qk_nope_head_dim;
    at["qk_rope_head_dim"] = a.mla.qk_rope_head_dim;
    at["v_head_dim"] = a.mla.v_head_dim;
  }
  at["qkv_bias"] = a.qkv_bias;
  if (a.qk_bias) at["qk_bias"] = true;  // written only when set: every other config reads as before
  at["out_bias"] = a.out_bias;
  at["qk_norm"] = to_string(a.qk_norm);
  at["sinks"] = a.sinks;
  at["pattern"] = ordered_json::array();
  for (const auto kind : a.pattern) at["pattern"].push_back(to_string(kind));
  at["window"] = a.window;
  at["chunk"] = a.chunk;
  j["attention"] = std::move(at);

  j["ffn"] = {{"type", to_string(c.ffn.type)}, {"bias", c.ffn.bias}, {"dense_width", c.ffn.dense_width}};

  if (c.is_moe()) {
    const auto& m = c.moe;
    ordered_json moe;
    moe["num_experts"] = m.num_experts;
    moe["top_k"] = m.top_k;
    moe["expert_width"] = m.expert_width;
    moe["num_shared_experts"] = m.num_shared_experts;
    moe["shared_width"] = m.shared_width;
    moe["shared_gate"] = m.shared_gate;
    moe["router_bias"] = m.router_bias;
    moe["router_score"] = to_string(m.router_score);
    // The routing choices are written only where they differ from what a file that does not name them reads.
    if (m.router_form != default_router_form(m)) moe["router_form"] = to_string(m.router_form);
    if (m.renormalize != default_renormalize(m.router_form)) moe["renormalize"] = m.renormalize;
    if (m.clamped_swiglu)
      moe["clamped_swiglu"] = {{"alpha", m.clamped_swiglu->alpha}, {"limit", m.clamped_swiglu->limit}};
    if (m.layers.empty())
      moe["layers"] = {{"first_dense", m.first_dense}, {"every", m.every}, {"phase", m.phase}};
    else
      moe["layers"] = m.layers;
    j["moe"] = std::move(moe);
  }
  const auto span = config_detail::loop_json;
  if (c.loops.size() == 1 && c.loops.front().first > 0) j["loop"] = span(c.loops.front());
  if (c.loops.size() > 1) {
    j["loops"] = ordered_json::array();
    for (const LoopConfig& l : c.loops) j["loops"].push_back(span(l));
  }
  j["mtp_modules"] = c.mtp_modules;
  return j;
}

std::string to_json(const ModelConfig& c) { return config_detail::config_json(c).dump(2) + "\n"; }

}  // namespace smelt
