// Reading and writing model configs: smelt's native JSON (docs/config.md) and
// Hugging Face config.json files, detected from their keys.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "smelt/checked_config.hpp"
#include "smelt/config.hpp"

namespace smelt {

enum class ConfigFormat { native, huggingface, executorch };

// Native JSON: a top-level "schema_version"; Hugging Face: a "model_type";
// ExecuTorch's Llama params.json: "dim" and "n_layers" (docs/config.md, section 2.5).
// Every parse validates the result (validate(), include/smelt/count.hpp: so
// the readers below are built in the count module, src/count/accept.cpp); failures throw config_error (bad values,
// every violation listed; malformed JSON gives line and column) or io_error
// (a file that cannot be read, include/smelt/file_io.hpp).
ModelConfig parse_config(std::string_view text, std::string_view source = "<config>");
ModelConfig parse_native_config(std::string_view text, std::string_view source = "<config>");
ModelConfig parse_hf_config(std::string_view text, std::string_view source = "<config.json>");
ConfigFormat detect_format(std::string_view text, std::string_view source = "<config>");

// parse_config, and the model_type the text names ("" for native JSON), from
// one parse of the text.
struct ConfigWithFamily {
  CheckedConfig config;
  std::string model_type;
};
ConfigWithFamily parse_config_with_family(std::string_view text, std::string_view source = "<config>");

// Reads a file of either format; errors carry "while reading config 'PATH'".
// "-" reads standard input (named "<stdin>" in messages).
ModelConfig read_config(const std::filesystem::path& path);

// parse_config and read_config, the config kept with its check: what solve()
// and sweep() take without validating it again.
CheckedConfig parse_checked_config(std::string_view text, std::string_view source = "<config>");
CheckedConfig read_checked_config(const std::filesystem::path& path);

// The model_type values parse_hf_config understands, sorted.
std::vector<std::string> supported_hf_model_types();

// Canonical native JSON (fixed key order, two-space indent, final newline):
// to_json(parse_native_config(to_json(c))) == to_json(c), byte for byte.
std::string to_json(const ModelConfig& config);

}  // namespace smelt
