// model_type "smelt" (config/hf_smelt.hpp): read the native block, then check
// that every copy of one of its fields beside it says the same.
#include "config/hf_smelt.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/native_json.hpp"
#include "config/validate_fields.hpp"
#include "smelt/error.hpp"
#include "util/json_reader.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

std::vector<SmeltMirror> smelt_mirrors(const ModelConfig& c) {
  return {
      {"vocab_size", "vocab_size", c.vocab_size},
      {"hidden_size", "hidden_size", c.hidden_size},
      {"num_hidden_layers", "num_layers", c.num_layers},
      {"num_attention_heads", "attention.num_heads", c.attention.num_heads},
      {"tie_word_embeddings", "tie_embeddings", c.tie_embeddings},
  };
}

std::vector<SmeltMirror> smelt_checked_copies(const ModelConfig& c) {
  std::vector<SmeltMirror> out = smelt_mirrors(c);
  out.push_back({"max_position_embeddings", "context_length", c.context_length});
  out.push_back({"intermediate_size", "ffn.dense_width", c.ffn.dense_width});
  if (c.attention.type == AttentionType::gqa) {
    out.push_back({"num_key_value_heads", "attention.num_kv_heads", c.attention.num_kv_heads});
    out.push_back({"head_dim", "attention.head_dim", c.attention.head_dim});
  }
  return out;
}

namespace {

// A rule between fields names them as the native config does ("loop.span"); here they are under "smelt".
std::vector<Violation> under_smelt(std::vector<Violation> violations) {
  for (Violation& v : violations) {
    if (v.field.empty() || v.field.starts_with("smelt.")) continue;
    std::string named;
    for (std::size_t at = 0; at <= v.field.size();) {
      const std::size_t end = std::min(v.field.find(", ", at), v.field.size());
      named += fmt::format("{}smelt.{}", named.empty() ? "" : ", ", v.field.substr(at, end - at));
      at = end + 2;
    }
    v.field = std::move(named);
  }
  return violations;
}

}  // namespace

ModelConfig import_smelt(const nlohmann::json& root, std::string_view source) {
  const auto it = root.find("smelt");
  if (it == root.end() || !it->is_object())
    throw config_error(Violation(
        "smelt", it == root.end() ? "missing" : json_excerpt(*it),
        "a config.json of model_type \"smelt\" holds the native config (docs/config.md) as the object \"smelt\""));
  ModelConfig c;
  try {
    c = native_config_from_json(*it, source, "smelt");
    validate_fields(c);
  } catch (const config_error& e) {
    throw config_error(under_smelt(e.violations()));
  }
  Violations violations;
  // The loop lives in the native block; the other families' top-level "loop" (config/hf_loop.cpp) is not read
  // here, so one written beside the block would be ignored: it is refused instead (null is absent, as there).
  for (const char* key : {"loop", "loops"})
    if (const auto it_loop = root.find(key); it_loop != root.end() && !it_loop->is_null())
      violations.add(Violation(key, json_excerpt(*it_loop),
                               "not read for model_type \"smelt\": the loops are the native block's (smelt.loop or "
                               "smelt.loops)"));
  for (const SmeltMirror& m : smelt_checked_copies(c)) {
    const auto copy = root.find(m.key);
    if (copy != root.end() && *copy != m.value)
      violations.add(Violation(std::string(m.key), json_excerpt(*copy),
                               fmt::format("must equal smelt.{} ({}): the native config is the model, this a copy",
                                           m.field, m.value.dump())));
  }
  if (c.attention.type == AttentionType::mla)
    for (const char* key : {"num_key_value_heads", "head_dim"})
      if (const auto it_key = root.find(key); it_key != root.end())
        violations.add(Violation(key, json_excerpt(*it_key),
                                 "not read for model_type \"smelt\": smelt.attention.type is \"mla\", which has no "
                                 "per-head keys and values"));
  violations.throw_if_any();
  return c;
}

}  // namespace smelt::config_detail
