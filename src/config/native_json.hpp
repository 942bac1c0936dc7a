// The native JSON of a config as a value, for the reports that embed it (match,
// sweep) without writing text and parsing it back; to_json() is its dump. And
// its reader, behind parse_native_config.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::config_detail {

// parse_native_config without count's rule: the fields are checked
// (validate_fields), not that the totals fit in 64 bits (src/count/accept.cpp).
ModelConfig read_native_config(std::string_view text, std::string_view source);

// The readers on JSON parsed already, fields checked, so that a config's text
// is parsed once, to tell its format and to read it: native JSON, and either
// format told from its keys (config_io.cpp). `path` prefixes the fields that
// messages name: "smelt" where a config.json of model_type "smelt" holds it.
ModelConfig native_config_from_json(const nlohmann::json& json, std::string_view source, std::string path = "");
ModelConfig config_from_json(const nlohmann::json& json, std::string_view source);

// Canonical key order, as docs/config.md lists it.
nlohmann::ordered_json config_json(const ModelConfig& config);
// One looped span as config_json writes it: span, count, residual_scale, then the per-pass extras that are set.
nlohmann::ordered_json loop_json(const LoopConfig& loop);

}  // namespace smelt::config_detail
