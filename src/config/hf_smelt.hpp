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

namespace smelt::detail {

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

}  // namespace smelt::detail
