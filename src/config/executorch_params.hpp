// ExecuTorch's Llama params.json (examples/models/llama/model_args.py's
// ModelArgs keys) with its block_repeat_config: read into a ModelConfig and
// written back. Detected by "dim" and "n_layers" (config/config_io.cpp).
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::config_detail {

// Reads the keys every violation of which is collected and reported at once
// (config_error); the fields are then checked by the caller (validate_fields).
ModelConfig import_executorch(const nlohmann::json& json, std::string_view source);

// The params.json of a config ExecuTorch's Llama can hold; what it cannot is
// found by reading the result back (export_executorch in export/).
nlohmann::ordered_json executorch_params(const ModelConfig& config);

}  // namespace smelt::config_detail
