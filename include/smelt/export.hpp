// Exports of a ModelConfig that training frameworks read: a Hugging Face
// config.json in one family's own schema, and Megatron-LM's model arguments
// (docs/export.md maps every field). Both describe the physical model: its
// stored layers, each once. Neither framework loops layers, so the loop
// travels beside them, as a "loop" block in the config.json (smelt's import
// reads it back) and as comment lines beside Megatron's arguments.
//
// What a target cannot express is never dropped: it is a config_error naming
// the field, its value and the rule, or (for Megatron's loop, which the user
// must add to the training code) a comment line.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "smelt/config.hpp"

namespace smelt {

// The model_type values export_hf writes (the families the import reads), sorted.
std::vector<std::string> hf_export_families();

// The family a config's text names: the "model_type" of a Hugging Face
// config.json, "" for smelt's native JSON. Throws config_error for text
// that is neither (detect_format's message).
std::string hf_family_of(std::string_view config_text, std::string_view source = "<config>");

// The family export_hf picks for a config that names none (a native config):
// the first of mixtral, qwen3_moe, qwen2_moe, deepseek_v3, deepseek_v2,
// gpt_oss, olmoe, llama4_text, dbrx, llama, qwen3, qwen2, mistral whose schema
// expresses it exactly. Throws config_error naming, for each family, the
// first field it cannot express.
std::string default_hf_family(const ModelConfig& config);

// The config.json (two-space indent, final newline) of `config` in the
// schema of `family` (a model_type; empty: default_hf_family). Importing it
// gives back `config`, name included when it has one (JSON-escaped, as
// every string). Throws config_error for an invalid config, a name that is
// not UTF-8, an unknown family (export_hf::family), or every field
// the family's schema cannot express ("attention.type = \"mla\": ...").
std::string export_hf(const ModelConfig& config, std::string_view family = {});

// ExecuTorch's Llama params.json (two-space indent, final newline) of
// `config`: its loops as block_repeat_config (docs/export.md). Importing it
// gives back `config` but the name (params.json has none). Throws
// config_error for an invalid config or every field the params.json cannot
// express ("moe = ...: the ExecuTorch Llama params.json schema cannot
// express it ...").
std::string export_executorch(const ModelConfig& config);

// Megatron-LM's model arguments for the physical model (pretrain_gpt.py's
// names), and the comment lines that say what they leave to the user.
struct MegatronArguments {
  std::vector<std::string> comments;                           // without the leading "# "
  std::vector<std::pair<std::string, std::string>> arguments;  // flag and value (--num-layers 30); switches: empty

  // The comments as lines starting with # and a space, then one line per
  // argument: its flag, and a space and its value unless it is a switch.
  // A comment stays one line whatever it holds (control characters and line
  // separators are written as \xNN or \uNNNN). Throws config_error for a flag
  // that is not -- and lower-case words, or a value that is not letters,
  // digits and , . - _ [ ] (export_megatron writes no other).
  std::string text() const;
};

// The arguments build the model smelt counts, parameter for parameter
// (rotary positions, the router's bias as Megatron holds it). The name
// appears only in a comment, as an ASCII JSON string literal. Throws
// config_error for an invalid config, a name that is not UTF-8, or a feature
// Megatron-LM's arguments cannot express (field, value and rule, every one
// at once).
MegatronArguments export_megatron(const ModelConfig& config);

}  // namespace smelt
