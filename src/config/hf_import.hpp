// Import of Hugging Face config.json files, dispatched on model_type.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::config_detail {

// Builds a ModelConfig from a parsed config.json. Throws config_error for an
// unknown model_type (listing the supported ones) or missing/mistyped fields
// (naming each). The result is not yet validated.
ModelConfig import_hf(const nlohmann::json& root, std::string_view source);

// parse_hf_config without count's rule: the fields are checked
// (validate_fields), not that the totals fit in 64 bits (src/count/accept.cpp).
ModelConfig read_hf_config(std::string_view text, std::string_view source);

// Supported model_type values, sorted.
std::vector<std::string> hf_model_types();

}  // namespace smelt::config_detail
