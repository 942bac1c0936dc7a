// model_type "smelt": the config.json of smelt's own transformers model class
// (python/smelt/hf, docs/training.md). The native config is the model, under
// "smelt"; beside it, transformers' names for a few of its fields, for tools
// that read them (a Trainer's log, a serving engine's memory estimate).
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::config_detail {

// The native config under "smelt" (fields named "smelt.<field>"), and each
// top-level copy present checked against it.
ModelConfig import_smelt(const nlohmann::json& root, std::string_view source);

// The top-level copies: transformers' name, the native field it copies, its value.
struct SmeltMirror {
  std::string_view key;
  std::string_view field;
  nlohmann::json value;
};
std::vector<SmeltMirror> smelt_mirrors(const ModelConfig& c);
// The copies the reader compares when present: the written ones, and the keys of the model's shape that
// transformers' other families spell alike (max_position_embeddings, intermediate_size and, for gqa,
// num_key_value_heads and head_dim), which a user may add or edit expecting them to change the model.
// Informational keys (_name_or_path, dtype, transformers_version, ...) are not compared: transformers rewrites
// them on every save.
std::vector<SmeltMirror> smelt_checked_copies(const ModelConfig& c);

}  // namespace smelt::config_detail
