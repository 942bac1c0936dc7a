// The native JSON of a config as a value, for the reports that embed it (match,
// sweep) without writing text and parsing it back; to_json() is its dump.
#pragma once

#include <nlohmann/json.hpp>

#include "smelt/config.hpp"

namespace smelt::detail {

// Canonical key order, as docs/config.md lists it.
nlohmann::ordered_json config_json(const ModelConfig& config);

}  // namespace smelt::detail
