// Readers of the looped families' own config.json keys (config/hf_looped.cpp):
// models whose published configs carry their loop, which smelt reads into
// ModelConfig::loops. Each returns the per-layer attention kinds, as the
// other family readers in config/hf_import.cpp do.
#pragma once

#include <vector>

#include "smelt/config.hpp"
#include "util/json_reader.hpp"

namespace smelt::config_detail {

using namespace smelt::detail;  // the helpers every module shares

std::vector<LayerAttention> read_ouro(JsonObject& o, ModelConfig& c);
std::vector<LayerAttention> read_huginn(JsonObject& o, ModelConfig& c);
std::vector<LayerAttention> read_nanbeige(JsonObject& o, ModelConfig& c);

}  // namespace smelt::config_detail
